import type { Event } from "@whc/contracts";
import type { Warning } from "@whc/api-model";

interface SignatureFacts {
  provider?: string;
  skewSeconds?: number;
  toleranceSeconds?: number;
}

function signatureOf(event: Event): SignatureFacts | undefined {
  if (!event.diagnosticJson) return undefined;
  try {
    const signature = (JSON.parse(event.diagnosticJson) as { signature?: SignatureFacts }).signature;
    return typeof signature === "object" && signature !== null ? signature : undefined;
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
