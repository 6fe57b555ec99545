/**
 * The OpenAPI document's tags, in the order tools list them, each described once here. Every
 * operation names at least one (a route entry's `tags`); a name not listed here does not
 * compile.
 */
export const TAGS = {
  endpoints:
    "Endpoints receive webhooks. Each has a `webhookUrl` on the receiving surface; create one per sender or environment, " +
    "set a `secret` to have signatures verified, a `response` to choose what senders are answered, and `forward` " +
    "settings to pass captures on (`operatingMode` `relay` or `proxy`).",
  events:
    "Events are the captured requests of one endpoint, newest first: list, filter, search and long-poll them, read one " +
    "with its headers, decrypted body and diagnosis, export them as NDJSON or one as a cURL command, delete them.",
  replay:
    "Replay sends one captured event again to a target URL of your choice, exactly as captured or re-signed with the " +
    "target's secret. Replays go through the SSRF guard and count against the account's daily allowance.",
  forwarding:
    "Forwarding is what `relay` and `proxy` endpoints do with each capture: these operations send an event " +
    "to the endpoint's destination again now, or record an attempt a client made itself (`whc listen --forward-to`).",
  listeners:
    "Listeners are the running `whc listen` processes that follow an endpoint and pass its captures to a local app: " +
    "each registers and heartbeats, so anyone can see who is listening, how far behind, and whether one is stuck.",
  schemas:
    "Schemas are what the catalog learned of an endpoint's JSON bodies, per event type: which paths they have, with which " +
    "types, how often. A capture that departs from them is flagged with `schemaDrift` (list filter `schemaDrift=true`).",
  keys:
    "API keys of the account, each with scopes (what it may do), optionally restricted to some endpoints and expiring: " +
    "create one per job or person with only what it needs, see when each was last used, revoke one at once.",
  audit:
    "The audit log: who did what to which endpoint or event, with which key, from where. Reads of a captured body " +
    "are recorded, as are exports, replays, changes and keys; lists are not. Kept WHC_AUDIT_RETENTION_DAYS (365).",
  alerts:
    "Alert channels: where the service tells the account what went wrong (a delivery given up, a signature that " +
    "failed, a listener stuck...), as a signed webhook or a Slack message, through a durable outbox with retries.",
  system:
    "Health, metrics, the provider list and this document: what operators, probes and client generators read. " +
    "Health, metrics and this document need no API key.",
  receiving:
    "The receiving surface: what webhook senders call. It is served by ingest at `WHC_INGEST_PUBLIC_URL`, not by the " +
    "gateway (these operations name their own server), takes any method and needs no API key.",
} as const;

export type Tag = keyof typeof TAGS;
