import type { Event } from "@whc/contracts";
import { diagnostic, redactionCountsOf, type DiagnosticView, type Warning } from "@whc/api-model";

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

/**
 * The event was stored redacted (design §16): whatever sends it (replay, redelivery, a cURL
 * command) sends the redacted bytes, not the sender's.
 */
export function redactedBodyWarning(event: Event): Warning | undefined {
  const c = redactionCountsOf(event.redactionsJson);
  if (!c || c.headers + c.jsonPaths + c.patterns === 0) return undefined;
  return {
    code: "body_redacted",
    message: `The event was stored redacted (${c.headers} header values, ${c.jsonPaths} JSON values, ${c.patterns} pattern matches replaced): what is sent carries [redacted] in their place, not what the sender sent.`,
  };
}

/** What a caller of a send should know of the event sent: a stale signature (exact sends only), a redacted body. */
export function sendWarnings(event: Event, exact: boolean, nowMs: number): Warning[] {
  return [exact ? staleSignatureWarning(event, nowMs) : undefined, redactedBodyWarning(event)].filter((w): w is Warning => w !== undefined);
}
