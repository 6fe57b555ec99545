import type { SendOutcome } from "./send.js";

/** One delivery to the local app, as printed. */
export interface Delivery {
  eventId: string;
  receivedAt: string;
  eventType: string | undefined;
  method: string;
  /** Where it was sent: the local app's origin and `path`. */
  url: string;
  /** The request target sent, as sent. */
  path: string;
  /** The attempt number the API gave it. */
  attempt: number;
  outcome: SendOutcome;
}

/** `<-- 200 POST /hooks/ci invoice.paid 12 ms`, or `<-- ERR connection_refused POST ...`. */
export function deliveryLine(d: Delivery): string {
  const answer = "error" in d.outcome ? `ERR ${d.outcome.error}` : String(d.outcome.status);
  return `<-- ${answer} ${d.method} ${d.path} ${d.eventType ?? "-"} ${d.outcome.durationMs} ms`;
}

/** The `--json` line: one object per delivery. */
export function deliveryJson(d: Delivery) {
  return {
    eventId: d.eventId,
    receivedAt: d.receivedAt,
    eventType: d.eventType ?? null,
    method: d.method,
    url: d.url,
    attempt: d.attempt,
    status: "error" in d.outcome ? null : d.outcome.status,
    error: "error" in d.outcome ? d.outcome.error : null,
    durationMs: d.outcome.durationMs,
  };
}
