import type { EndpointJson, EventDetailJson, ForwardedResponseJson, ForwardViewJson, RedactionCounts, RedactSettings, SchemaDriftChangeJson } from "@whc/api-model";
import { inboundText } from "./inbound-options.js";
import { dedupeText } from "./dedupe-options.js";
import { table } from "./output.js";

/** `name  value` rows, the absent ones left out. */
function facts(rows: [string, string | undefined][]): string {
  return table(rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== ""));
}

function bodyFact(e: EventDetailJson): string {
  if (e.decryption === "metadata_only") return "not stored (metadata only)";
  if (e.decryption === "failed") return "cannot be decrypted";
  const size = `${e.originalSizeBytes} B${e.truncated ? ", stored truncated" : ""}`;
  return `${e.bodyEncoding ?? "utf8"}, ${size} (whc events get --body prints it)`;
}

function forwardFact(e: EventDetailJson): string | undefined {
  const f = e.forwardedResponse as Partial<ForwardedResponseJson>;
  if (!f.state) return undefined;
  // Several destinations (design §17): each delivery in a few words.
  if ((f.deliveries?.length ?? 0) > 1) return `${f.state}: ${f.deliveries!.map((d) => `${d.name || d.destinationId} ${d.state}`).join(", ")}`;
  const last = f.attempts?.at(-1);
  const tried = last ? `, ${f.attempts!.length} attempt(s), last ${last.status ?? last.error ?? "no answer"}` : "";
  return `${f.state} to ${f.target}${tried}`;
}

/** An event's metadata and headers, as a person reads them (the body stays out: it may be binary). */
export function describeEvent(e: EventDetailJson): string {
  const verification = e.verificationFailureReason ? `${e.verification} (${e.verificationFailureReason})` : e.verification;
  const head = facts([
    ["id", e.id],
    ["received", e.receivedAt],
    ["request", `${e.method} ${e.path || "/"}`],
    ["from", e.remoteIp],
    ["provider", e.provider],
    ["event type", e.canonicalEventType],
    ["verification", verification],
    ["answered", String(e.responseCode)],
    ["body", bodyFact(e)],
    ["forward", forwardFact(e)],
    ["duplicate of", e.duplicateOf ? `${e.duplicateOf} (stored and answered, not forwarded)` : undefined],
    ["redacted", e.redactions ? redactionsText(e.redactions) : undefined],
    ["schema drift", e.schemaDrift?.map(driftText).join("; ")],
    ["read", e.readAt],
  ]);
  const headers = Object.entries(e.headers).flatMap(([name, values]) => values.map((v) => `  ${name}: ${v}`));
  return [head, "", "headers", ...headers].join("\n");
}

/** Where an endpoint forwards, in one line. */
export function forwardText(f: ForwardViewJson): string {
  return `${f.url} (keepPath ${f.keepPath}, timeout ${f.timeoutMs} ms, ${f.maxAttempts} attempts${f.targetSecretSet ? ", re-signed" : ""})`;
}

/** What an endpoint redacts, in one line. */
export function redactText(r: RedactSettings): string {
  const part = (label: string, list: string[] | undefined) => (list?.length ? `${label} ${list.join(", ")}` : undefined);
  return [part("headers", r.headers), part("JSON paths", r.jsonPaths), part("patterns", r.patterns)].filter(Boolean).join("; ");
}

/** One change of a drifted body, as a person reads it: `data.object.amount: integer -> string`. */
export function driftText(c: SchemaDriftChangeJson): string {
  if (c.change === "added") return `${c.path}: new (${c.now})`;
  if (c.change === "missing") return `${c.path}: missing (was ${c.seen.join("|")})`;
  return `${c.path}: ${c.seen.join("|")} -> ${c.now}`;
}

/** How much of an event was redacted before it was stored. */
function redactionsText(c: RedactionCounts): string {
  return `${c.headers} header value(s), ${c.jsonPaths} JSON value(s), ${c.patterns} pattern match(es)`;
}

/** An endpoint's settings, as a person reads them. */
export function describeEndpoint(e: EndpointJson): string {
  return facts([
    ["id", e.id],
    ["slug", e.slug],
    ["name", e.displayName],
    ["webhook url", e.webhookUrl],
    ["status", e.status],
    ["mode", e.operatingMode],
    ["forward", e.forward ? forwardText(e.forward) : undefined],
    ["destinations", e.destinations && e.destinations.length > 1 ? e.destinations.map((d) => `${d.name}${d.filter ? " (filtered)" : ""}`).join(", ") : undefined],
    ["provider", e.provider],
    ["secret", e.secretSet ? `set${e.secretRotatedAt ? `, rotated ${e.secretRotatedAt}` : ""}` : "none"],
    ["response", e.response ? JSON.stringify(e.response) : "200 with the event id"],
    ["inbound", inboundText(e)],
    ["redact", e.redact ? redactText(e.redact) : undefined],
    ["dedupe", e.dedupe ? dedupeText(e.dedupe) : undefined],
    ["replay", `from the API ${e.replayFromApi ? "allowed" : "refused"}, from the dashboard ${e.replayFromDashboard ? "allowed" : "refused"}`],
    ["events", `${e.eventCount}${e.lastEventAt ? `, last ${e.lastEventAt}` : ""}`],
    ["purged", e.purgedEventCount ? `${e.purgedEventCount}${e.lastPurgedAt ? `, last ${e.lastPurgedAt}` : ""}` : undefined],
    ["created", e.createdAt],
  ]);
}
