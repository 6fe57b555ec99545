import type { EventDetailJson, EventSignatureJson } from "@whc/api-model";
import type { ResignMode } from "./options.js";
import type { LocalRequest } from "./local-request.js";

export interface SignatureAge {
  /** What the provider accepts, seconds. */
  toleranceS: number;
  /** How old the captured signature is now, seconds. */
  ageS: number;
}

/**
 * The captured signature's age now, and its provider's tolerance, from the detail's diagnosis
 * (design §12): the tolerance every timed scheme declares (providers/*.ts `toleranceS`), the
 * signature's skew at capture when ingest read its timestamp, plus the time since the capture.
 * Undefined for a scheme that signs no timestamp (GitHub, Shopify...): its signature never goes
 * stale.
 */
export function signatureAge(detail: Pick<EventDetailJson, "diagnostic" | "receivedAt">, nowMs: number): SignatureAge | undefined {
  const s = (detail.diagnostic as { signature?: { toleranceSeconds?: unknown; skewSeconds?: unknown } }).signature;
  if (typeof s?.toleranceSeconds !== "number") return undefined;
  const skewS = typeof s.skewSeconds === "number" ? s.skewSeconds : 0;
  return { toleranceS: s.toleranceSeconds, ageS: skewS + (nowMs - Date.parse(detail.receivedAt)) / 1000 };
}

/**
 * A signature this close to the end of its tolerance is re-signed too: the app checks it after
 * the trip and whatever its own clock says. 30 s, or a quarter of a short tolerance.
 */
export function staleMarginS(toleranceS: number): number {
  return Math.min(30, toleranceS / 4);
}

/** Whether this event goes out with a fresh signature. */
export function needsResign(mode: ResignMode, detail: Pick<EventDetailJson, "diagnostic" | "receivedAt">, nowMs: number): boolean {
  if (mode !== "stale") return mode === "always";
  const age = signatureAge(detail, nowMs);
  return age !== undefined && age.ageS > age.toleranceS - staleMarginS(age.toleranceS);
}

/**
 * The request with its provider's signature headers replaced: every captured header the
 * answer's `replaces` names is dropped, and the fresh ones go where the first of them was (at
 * the end of the captured ones when none was there).
 */
export function withSignature(req: LocalRequest, signature: EventSignatureJson): LocalRequest {
  const replaced = new Set(signature.replaces.map((name) => name.toLowerCase()));
  const fresh = Object.entries(signature.headers);
  const headers: [string, string][] = [];
  let placed = false;
  for (const header of req.headers) {
    if (!replaced.has(header[0].toLowerCase())) {
      if (!placed && /^x-whc-/i.test(header[0])) {
        headers.push(...fresh);
        placed = true;
      }
      headers.push(header);
    } else if (!placed) {
      headers.push(...fresh);
      placed = true;
    }
  }
  if (!placed) headers.push(...fresh);
  return { ...req, headers };
}
