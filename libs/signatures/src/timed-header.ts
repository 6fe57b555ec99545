import { decodeHex, SHA256_BYTES } from "./crypto.js";
import { parseUnixSeconds } from "./outcome.js";

export interface TimedSignature {
  /** The timestamp's own text, as it was signed. */
  timestamp: string;
  t: number;
  /** Every signature entry that is a SHA-256 hex digest: any one may match (a secret being rolled). */
  candidates: Buffer[];
}

/**
 * A `t=<unix s>,v1=<hex>` style header (Stripe, Calendly; Paddle with `;`, `ts` and `h1`): the
 * first timestamp counts, every digest entry is a candidate; undefined unless both are there.
 */
export function parseTimedSignature(value: string, format: { separator: string; timeKey: string; digestKey: string }): TimedSignature | undefined {
  let timestamp: string | undefined;
  const candidates: Buffer[] = [];
  for (const item of value.split(format.separator)) {
    const eq = item.indexOf("=");
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const val = item.slice(eq + 1).trim();
    if (key === format.timeKey) timestamp ??= val;
    else if (key === format.digestKey) {
      const digest = decodeHex(val);
      if (digest?.length === SHA256_BYTES) candidates.push(digest);
    }
  }
  const t = parseUnixSeconds(timestamp);
  return timestamp === undefined || t === undefined || candidates.length === 0 ? undefined : { timestamp, t, candidates };
}
