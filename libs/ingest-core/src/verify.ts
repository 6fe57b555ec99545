import type { HeaderPair } from "./request.js";

export type Verification = "verified" | "failed" | "unverified";
export type FailureReason =
  | ""
  | "missing_signature"
  | "malformed_signature"
  | "signature_mismatch"
  | "timestamp_out_of_tolerance";

export interface VerifyInput {
  /** The endpoint's configured provider; `generic` lets the headers decide. */
  provider: string;
  headers: readonly HeaderPair[];
  body: Buffer;
  secret?: Buffer | undefined;
  genericSignatureHeader: string;
  genericSignaturePrefix: string;
  nowMs: number;
}

export interface VerifyResult {
  provider: string;
  verification: Verification;
  failureReason: FailureReason;
  canonicalEventType: string;
}

export function headerValue(headers: readonly HeaderPair[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [n, v] of headers) if (n.toLowerCase() === lower) return v;
  return undefined;
}

function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  if (body.length === 0 || body.length > 4 * 1024 * 1024) return undefined;
  const first = body[0];
  if (first !== 0x7b && first !== 0x20 && first !== 0x0a && first !== 0x0d && first !== 0x09) return undefined;
  try {
    const value = JSON.parse(body.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Generic event type: a top-level `type`, `event` or `eventType` string. */
export function genericEventType(body: Buffer): string {
  const json = jsonObject(body);
  if (!json) return "";
  for (const key of ["type", "event", "eventType"]) {
    const v = json[key];
    if (typeof v === "string") return v.slice(0, 200);
  }
  return "";
}

/** Verifies a capture and names its event type. */
export function verifyCapture(input: VerifyInput): VerifyResult {
  return {
    provider: input.provider || "generic",
    verification: "unverified",
    failureReason: "",
    canonicalEventType: genericEventType(input.body),
  };
}
