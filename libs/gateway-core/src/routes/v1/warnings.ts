import type { Event } from "@whc/contracts";
import { diagnostic, type DiagnosticView, type Warning } from "@whc/api-model";

/** The stored diagnostic's signature part, read with the /v1 schema; undefined when there is none to read. */
function signatureOf(event: Event): DiagnosticView["signature"] {
  if (!event.diagnosticJson) return undefined;
  try {
    const parsed = diagnostic.safeParse(JSON.parse(event.diagnosticJson));
    return parsed.success ? parsed.data.signature : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sent as captured, the event would carry a signature whose timestamp the provider's tolerance
 * already rejects (docs/design.md §12): the receiver will refuse it, so say so and point at
 * `mode: resign`. The signature's age is its skew at capture plus the time since.
 */
export function staleSignatureWarning(event: Event, nowMs: number): Warning | undefined {
  const s = signatureOf(event);
  if (typeof s?.skewSeconds !== "number" || typeof s.toleranceSeconds !== "number") return undefined;
  const ageS = Math.round(s.skewSeconds + (nowMs - Number(event.receivedAtMs)) / 1000);
  if (ageS <= s.toleranceSeconds) return undefined;
  return {
    code: "signature_timestamp_stale",
    message: `The signature was made ${ageS} s ago and ${s.provider ?? "the provider"} accepts ${s.toleranceSeconds} s: an exact replay will be refused; replay with mode "resign" and the target's secret.`,
  };
}
