import type { Context } from "koa";
import getRawBody from "raw-body";
import { AppError } from "@whc/errors";

export const MAX_MANAGEMENT_BODY_BYTES = 64 * 1024;
/**
 * An endpoint's create and update, and a destination test: up to ten destinations, each with a
 * filter (16 KiB) and a transform (64 KiB), do not fit in 64 KiB (design §17, ADR 0080).
 */
export const MAX_ENDPOINT_BODY_BYTES = 1024 * 1024;

/**
 * Reads a management request body: application/json only, at most `limit` bytes (64 KiB
 * unless the route says otherwise), and a JSON object. An absent body reads as {} so that "no
 * field given" means the defaults.
 */
export async function readJsonObject(ctx: Context, limit = MAX_MANAGEMENT_BODY_BYTES): Promise<Record<string, unknown>> {
  const length = ctx.request.length;
  const hasBody = ctx.request.type !== "" || (length !== undefined && length > 0) || ctx.get("transfer-encoding") !== "";
  if (!hasBody) return {};
  if (!ctx.request.is("application/json")) {
    ctx.req.resume();
    throw new AppError("unsupported_media_type", "body is not application/json");
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: "utf8", length });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") throw new AppError("payload_too_large", `body over ${limit} bytes`);
    throw new AppError("malformed_json", "body could not be read", { cause: err });
  }
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("malformed_json", "body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("malformed_json", "body is not a JSON object");
  }
  return value as Record<string, unknown>;
}
