/**
 * Reading a body for its event type. Bodies are arbitrary bytes (binary, truncated, not UTF-8),
 * so everything here answers undefined instead of throwing.
 */

/** Past this, parsing costs more than an event type is worth. */
const MAX_PARSE_BYTES = 8 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function utf8Text(body: Uint8Array): string | undefined {
  if (body.length === 0 || body.length > MAX_PARSE_BYTES) return undefined;
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

export type JsonObject = Readonly<Record<string, unknown>>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The body as a JSON object; arrays, scalars and anything unparsable are undefined. */
export function jsonObject(body: Uint8Array | string): JsonObject | undefined {
  const text = typeof body === "string" ? body : utf8Text(body);
  // Only an object can carry a type, so other JSON is not worth parsing.
  if (text === undefined || !/^\s*\{/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** One field of an `application/x-www-form-urlencoded` body. */
export function formField(body: Uint8Array, name: string): string | undefined {
  const text = utf8Text(body);
  return text === undefined ? undefined : (new URLSearchParams(text).get(name) ?? undefined);
}
