import { z } from "zod";
import {
  alertChannelList,
  alertChannelView,
  alertMessage,
  alertTestAnswer,
  createAlertChannelRequest,
  createdAlertChannel,
  auditEntry,
  auditList,
  configAppliedRequest,
  apiKeyList,
  apiKeyView,
  captureAck,
  createApiKeyRequest,
  createdApiKey,
  captureRefusal,
  curlExport,
  endpoint,
  endpointList,
  errorReply,
  eventDetail,
  eventSignature,
  eventSignatureRequest,
  eventDiff,
  eventDiffChange,
  eventList,
  eventSummary,
  forwardAttempt,
  forwardFailure,
  health,
  listenerHeartbeat,
  listenerList,
  listenerView,
  jsonSchemaDocument,
  providerInfo,
  schemaDriftChange,
  schemaList,
  schemaSummary,
  providerList,
  readiness,
  recordAttemptRequest,
  redeliveryCount,
  redeliveryFilter,
  redeliveryJob,
  redeliveryJobList,
  redeliveryRequest,
  replayRequest,
  replayResult,
  testDestinationRequest,
  testDestinationResult,
  triggerRequest,
  triggerResult,
} from "@whc/api-model";
import { errorTable } from "./errors-table.js";
import { receivingPaths } from "./openapi-receiving.js";
import { TAGS } from "./openapi-tags.js";
import { pathParams, type Route } from "./route.js";
import { createEndpointBody, updateEndpointBody } from "./routes/v1/endpoints.js";
import { redeliverBody } from "./routes/v1/forwarding.js";

/**
 * The OpenAPI 3.1 document, generated from the route table and the zod schemas of
 * @whc/api-model that validate requests and type answers: one source for both. Each route
 * entry carries its own summary, description and tags; what is said here once is what every
 * operation shares (components, errors, path ids, the servers). docs/adr/0040.
 */
type Json = Record<string, unknown>;

/** A named component: its schema, what it is, and examples where one is cheap to keep true. */
interface Component {
  id: string;
  description: string;
  examples?: unknown[];
}

const EVENT_ID_EXAMPLE = "019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8b";
const ENDPOINT_ID_EXAMPLE = "019a6b2d-1f00-7c3a-8e5d-2a1b3c4d5e6f";

/** Requests keep their `required` lists; so do error replies and extensions. */
const REQUESTS = new Map<z.ZodType, Component>([
  [
    createEndpointBody,
    {
      id: "CreateEndpointRequest",
      description: "The body of `POST /v1/endpoints`. Every field is optional; a field the API does not know is refused (`validation_failed`, `reason: unknown`).",
      examples: [{ slug: "stripe-prod", displayName: "Stripe (production)", provider: "stripe", secret: "whsec_5f8a2c1e9b7d4f3a" }],
    },
  ],
  [
    updateEndpointBody,
    {
      id: "UpdateEndpointRequest",
      description:
        "The body of `PATCH /v1/endpoints/{id}`: a field given replaces the stored one, `null` removes `secret`, `response`, `forward` or `destinations`, and `slug` cannot change.",
      examples: [{ status: "paused" }],
    },
  ],
  [
    replayRequest,
    {
      id: "ReplayRequest",
      description: "Where to send the event again, and whether to send it as captured (`exact`) or re-signed with `target_secret` (`resign`).",
      examples: [{ target_url: "https://staging.example.com/webhooks/stripe", mode: "resign", target_secret: "whsec_staging" }],
    },
  ],
  [
    redeliverBody,
    {
      id: "RedeliverRequest",
      description: "Send no body, `{}`, or the destination to send to (`destinationId`, design §17).",
      examples: [{}, { destinationId: "019a6b2f-0a1b-7c2d-8e3f-4a5b6c7d8e9f" }],
    },
  ],
  [
    testDestinationRequest,
    {
      id: "TestDestinationRequest",
      description: "A filter and a transform to try on one stored event of the endpoint (design §17); nothing is saved or sent.",
      examples: [
        {
          destination: { filter: { eventType: { $in: ["invoice.paid"] } }, transform: "function transform(req) { req.headers['x-env'] = ['prod']; return req; }" },
          eventId: EVENT_ID_EXAMPLE,
        },
      ],
    },
  ],
  [
    createApiKeyRequest,
    {
      id: "CreateApiKeyRequest",
      description: "The body of `POST /v1/keys`: a name, the scopes, optionally the only endpoints the key sees and when it expires.",
      examples: [
        { name: "ci-read-stripe", scopes: ["endpoints:read", "events:read"], endpointIds: [ENDPOINT_ID_EXAMPLE], expiresAt: "2027-01-01T00:00:00.000Z" },
      ],
    },
  ],
  [
    createAlertChannelRequest,
    {
      id: "CreateAlertChannelRequest",
      description: "The body of `POST /v1/alert-channels`: a name, the channel's type and URL, what it is told about, optionally the only endpoints it hears of and a webhook channel's secret.",
      examples: [
        { name: "ops-slack", type: "slack", url: "https://hooks.slack.com/services/T000/B000/XXXX", events: ["delivery.exhausted", "signature.failed"] },
        { name: "pager", type: "webhook", url: "https://ops.example.com/whc-alerts", events: ["delivery.exhausted"], endpointIds: [ENDPOINT_ID_EXAMPLE] },
      ],
    },
  ],
  [
    recordAttemptRequest,
    {
      id: "RecordAttemptRequest",
      description: "An attempt a client made itself: exactly one of `status` (the destination answered) and `error` (it did not).",
    },
  ],
  [
    eventSignatureRequest,
    {
      id: "EventSignatureRequest",
      description: "Optional: the secret to sign with instead of the endpoint's, and the URL the signed request will go to (for providers that sign it).",
      examples: [{ target_url: "http://localhost:3000/webhooks/stripe" }],
    },
  ],
  [
    redeliveryRequest,
    {
      id: "RedeliveryRequest",
      description: "Which events' deliveries to redo (the event list's filters), and whether only to count them.",
      examples: [{ filter: { forwardState: "exhausted", from: "2026-11-26T00:00:00.000Z" } }, { filter: { destinationId: "019a6b31-0c00-7d00-8e00-3f4a5b6c7d8e", eventType: "invoice.paid" }, dryRun: true }],
    },
  ],
  [
    redeliveryFilter,
    {
      id: "RedeliveryFilter",
      description: "The event list's filters as JSON values, AND-ed (`search` excepted); `destinationId` also limits which of an event's deliveries are redone.",
    },
  ],
  [
    listenerHeartbeat,
    {
      id: "ListenerHeartbeat",
      description: "One heartbeat of a running `whc listen`: where it runs, since when, its cursor and the last error it met.",
      examples: [
        {
          host: "dev-laptop.local",
          startedAt: "2026-11-26T09:30:00.000Z",
          cursor: { at: "2026-11-26T10:02:17.412Z", id: EVENT_ID_EXAMPLE },
          lastError: null,
        },
      ],
    },
  ],
]);

const RESPONSES = new Map<z.ZodType, Component>([
  [
    endpoint,
    {
      id: "Endpoint",
      description: "A receiving endpoint: senders call its `webhookUrl`, and every request they send becomes one of its events.",
      examples: [
        {
          id: ENDPOINT_ID_EXAMPLE,
          slug: "stripe-prod",
          displayName: "Stripe (production)",
          webhookUrl: `https://hooks.example.com/h/${ENDPOINT_ID_EXAMPLE}`,
          operatingMode: "capture",
          status: "active",
          replayFromDashboard: true,
          replayFromApi: true,
          provider: "stripe",
          secretSet: true,
          source: "api",
          createdAt: "2026-11-26T09:30:00.000Z",
          updatedAt: "2026-11-26T09:30:00.000Z",
          eventCount: 42,
          lastEventAt: "2026-11-26T10:02:17.412Z",
          purgedEventCount: 0,
        },
      ],
    },
  ],
  [endpointList, { id: "EndpointList", description: "The account's endpoints." }],
  [
    eventSummary,
    {
      id: "EventSummary",
      description: "One captured request as lists show it: when it arrived, what it was, what the sender was answered, whether its signature verified.",
    },
  ],
  [
    eventList,
    {
      id: "EventList",
      description:
        "A page of events, newest first by (receivedAt, id). `nextBefore`/`nextBeforeId` page to older events (present only when there are some); " +
        "`nextAfter`/`nextAfterId` poll for newer ones.",
    },
  ],
  [
    eventDetail,
    {
      id: "EventDetail",
      description:
        "One captured request whole: the summary's fields, its sub-path and query (`path`), headers, body (decrypted; absent unless `decryption` is `ok`), " +
        "the sender's address, what ingest diagnosed and, for a forwarded event, its delivery record.",
    },
  ],
  [curlExport, { id: "CurlExport", description: "A one-line bash command that sends the captured request again with curl, and how faithful it is." }],
  [replayResult, { id: "ReplayResult", description: "What the replay target answered, or why it could not be reached." }],
  [forwardAttempt, { id: "ForwardAttempt", description: "One attempt to deliver an event to its endpoint's forward destination, and what the destination answered." }],
  [
    eventSignature,
    {
      id: "EventSignature",
      description: "Fresh signature headers for an event's stored body: drop the captured headers `replaces` names, then add `headers`.",
      examples: [
        {
          headers: { "Stripe-Signature": "t=1795000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd" },
          replaces: ["stripe-signature"],
          provider: "stripe",
          signedAt: "2026-11-26T10:02:17.000Z",
        },
      ],
    },
  ],
  [eventDiffChange, { id: "EventDiffChange", description: "One change from the event to `with`: what, where (a JSON Pointer), and the values on each side." }],
  [
    eventDiff,
    {
      id: "EventDiff",
      description: "What changed between two captured requests.",
      examples: [
        {
          same: false,
          bodyKind: "json",
          changes: [
            { op: "replace", path: "/headers/stripe-signature", from: "t=1795000000,v1=5257a8...", to: "t=1795000420,v1=9c1f02..." },
            { op: "replace", path: "/body/data/object/amount", from: 500, to: 700 },
            { op: "add", path: "/body/data/object/coupon", to: "SPRING" },
          ],
          truncated: false,
        },
      ],
    },
  ],
  [listenerView, { id: "Listener", description: "A running `whc listen` of the endpoint: where, since when, how far behind, and whether it is stuck." }],
  [listenerList, { id: "ListenerList", description: "The endpoint's live listeners, oldest first." }],
  [
    schemaDriftChange,
    {
      id: "SchemaDriftChange",
      description: "One way a capture's JSON body departs from what its endpoint learned of its event type (design §19).",
      examples: [{ path: "data.object.amount_paid", change: "type_changed", seen: ["integer"], now: "string" }],
    },
  ],
  [
    schemaSummary,
    {
      id: "LearnedSchema",
      description: "What was learned of one event type's JSON bodies: each path with its types and the share of samples it was in. No value is kept.",
      examples: [
        {
          eventType: "invoice.paid",
          samples: 1287,
          firstSeenAt: "2026-11-20T08:00:00.000Z",
          lastSeenAt: "2026-11-26T10:02:17.412Z",
          fields: [
            { path: "id", types: ["string"], presentRatio: 1 },
            { path: "data.object.amount_paid", types: ["integer"], presentRatio: 1 },
            { path: "data.object.lines.data[].id", types: ["string"], presentRatio: 0.998 },
          ],
        },
      ],
    },
  ],
  [schemaList, { id: "LearnedSchemaList", description: "An endpoint's learned schemas, one per event type, by event type." }],
  [
    jsonSchemaDocument,
    {
      id: "JsonSchemaDocument",
      description: "A JSON Schema (draft 2020-12) of what was learned of one event type: types per path and `required` members. Shapes only: no value, format or enum.",
    },
  ],
  [
    apiKeyView,
    {
      id: "ApiKey",
      description: "An API key of the account as listed: never the key itself, only its first characters (`prefix`).",
      examples: [
        {
          id: "019a6b2f-0a00-7b00-8c00-1d2e3f4a5b6c",
          name: "ci-read-stripe",
          prefix: "whc_3Fq9Zk",
          scopes: ["endpoints:read", "events:read"],
          endpointIds: [ENDPOINT_ID_EXAMPLE],
          createdAt: "2026-11-26T09:30:00.000Z",
          expiresAt: "2027-01-01T00:00:00.000Z",
          lastUsedAt: "2026-11-26T10:02:00.000Z",
          revokedAt: null,
        },
      ],
    },
  ],
  [apiKeyList, { id: "ApiKeyList", description: "The account's keys within the calling key's reach, oldest first." }],
  [createdApiKey, { id: "CreatedApiKey", description: "A new key as listed, with the key itself in `key`: shown this once." }],
  [
    auditEntry,
    {
      id: "AuditEntry",
      description: "One entry of the audit log: an action, the key that took it, from where, on which endpoint and event.",
      examples: [
        {
          id: "019a6b30-0b00-7c00-8d00-2e3f4a5b6c7d",
          at: "2026-11-26T10:05:00.000Z",
          action: "event.curl_exported",
          keyId: "019a6b2f-0a00-7b00-8c00-1d2e3f4a5b6c",
          keyPrefix: "whc_3Fq9Zk",
          remoteIp: "203.0.113.7",
          requestId: "0b6f3c2e-8d4a-4f1b-9c7e-5a2d1e3f4b6c",
          endpointId: ENDPOINT_ID_EXAMPLE,
          eventId: EVENT_ID_EXAMPLE,
          details: { unmasked: true },
        },
      ],
    },
  ],
  [auditList, { id: "AuditList", description: "A page of the audit log, newest first by (at, id), with the cursors to page on." }],
  [
    alertChannelView,
    {
      id: "AlertChannel",
      description: "An alert channel of the account: where alerts go, which ones, for which endpoints, and how its last alert went. Never its secret.",
      examples: [
        {
          id: "019a6b31-0c00-7d00-8e00-3f4a5b6c7d8e",
          name: "ops-slack",
          type: "slack",
          url: "https://hooks.slack.com/services/T000/B000/XXXX",
          events: ["delivery.exhausted", "signature.failed"],
          endpointIds: [],
          secretSet: false,
          createdAt: "2026-11-26T09:30:00.000Z",
          lastDelivery: {
            alertId: "019a6b32-0d00-7e00-8f00-4a5b6c7d8e9f",
            type: "delivery.exhausted",
            at: "2026-11-26T10:02:18.000Z",
            state: "delivered",
            attempts: 1,
            status: 200,
            error: null,
          },
        },
      ],
    },
  ],
  [
    redeliveryJob,
    {
      id: "RedeliveryJob",
      description: "A bulk redelivery job: what it takes, how far it got, how its deliveries ended, who started it.",
      examples: [
        {
          id: "019a6b40-1a00-7b00-8c00-5d6e7f8a9b0c",
          endpointId: ENDPOINT_ID_EXAMPLE,
          state: "running",
          total: 1000,
          queued: 400,
          done: 310,
          failed: 2,
          filter: { forwardState: "exhausted" },
          createdAt: "2026-11-28T09:30:00.000Z",
          updatedAt: "2026-11-28T09:30:41.000Z",
          finishedAt: null,
          createdBy: { keyId: "019a6b31-0c00-7d00-8e00-000000000001", keyPrefix: "whc_3kF9" },
        },
      ],
    },
  ],
  [redeliveryJobList, { id: "RedeliveryJobList", description: "An endpoint's bulk redelivery jobs, newest first." }],
  [redeliveryCount, { id: "RedeliveryCount", description: "A dry run: how many deliveries a job with this filter would redo now.", examples: [{ count: 1000 }] }],
  [alertChannelList, { id: "AlertChannelList", description: "The account's alert channels within the calling key's reach, oldest first." }],
  [createdAlertChannel, { id: "CreatedAlertChannel", description: "A new channel as listed, with a webhook channel's `secret`: shown this once." }],
  [alertTestAnswer, { id: "AlertTest", description: "The test alert, queued in the alert outbox." }],
  [
    alertMessage,
    {
      id: "AlertMessage",
      description: "What a webhook alert channel receives (see `webhooks.alert`): the alert's type, when its last occurrence happened, and what it is about.",
      examples: [
        {
          type: "delivery.exhausted",
          timestamp: "2026-11-26T10:02:17.412Z",
          data: {
            eventId: EVENT_ID_EXAMPLE,
            attempts: 6,
            status: 503,
            error: null,
            endpointId: ENDPOINT_ID_EXAMPLE,
            endpointSlug: "stripe-prod",
            count: 1,
            firstAt: "2026-11-26T10:02:17.412Z",
            lastAt: "2026-11-26T10:02:17.412Z",
          },
        },
      ],
    },
  ],
  [
    configAppliedRequest,
    {
      id: "ConfigAppliedRequest",
      description: "What one run of `whc apply` changed, recorded as a config.applied entry of the audit log.",
      examples: [{ sha256: "9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f", total: 3, applied: 3, created: ["billing"], updated: ["github"], deleted: ["old"] }],
    },
  ],
  [
    errorReply,
    {
      id: "ErrorReply",
      description:
        "Every error of the gateway: a fixed `error` code and `message`, `details` naming the field and reason for `validation_failed` (`{}` otherwise), " +
        "and the `requestId` also sent as `X-Request-Id`.",
      examples: [
        {
          error: "validation_failed",
          message: "The request is not valid.",
          details: { field: "slug", reason: "pattern" },
          requestId: "0b6f3c2e-8d4a-4f1b-9c7e-5a2d1e3f4b6c",
        },
      ],
    },
  ],
  [
    health,
    {
      id: "Health",
      description: "Whether the service's dependencies answer: `ok` when every check needed is `ok`.",
      examples: [{ status: "ok", checks: { catalog: "ok", crypto: "ok", replay: "ok", bus: "ok" } }],
    },
  ],
  [
    readiness,
    {
      id: "Readiness",
      description: "Whether every dependency answers now (`ok`), else which ones do not (`failing`): catalog, crypto, replay, nats.",
    },
  ],
  [providerInfo, { id: "ProviderInfo", description: "One signature scheme: what it signs, the headers it uses, its timestamp tolerance and the format of its secret." }],
  [providerList, { id: "ProviderList", description: "The signature schemes endpoints can verify, in detection order." }],
  [
    triggerRequest,
    {
      id: "TriggerRequest",
      description: "Which sample of the endpoint's provider to send (`GET /v1/providers`, `sampleEventTypes`), and the fields to set in it.",
      examples: [{ eventType: "invoice.paid", set: { "data.object.amount_paid": 500 } }],
    },
  ],
  [triggerResult, { id: "TriggerResult", description: "The event the triggered sample was captured as." }],
  [
    testDestinationResult,
    {
      id: "TestDestinationResult",
      description: "Whether the filter matches the event, and the request a delivery would send: null when not matched, skipped by the transform or failed (`error`).",
      examples: [
        {
          matched: true,
          request: { method: "POST", path: "/", query: "", headers: { "content-type": ["application/json"], "x-env": ["prod"] }, body: { type: "invoice.paid" } },
          error: null,
          durationMs: 3.2,
        },
      ],
    },
  ],
  [
    captureAck,
    {
      id: "CaptureAck",
      description: "Ingest's answer to a stored capture when the endpoint configures no other answer.",
      examples: [{ ok: true, id: EVENT_ID_EXAMPLE }],
    },
  ],
  [
    captureRefusal,
    {
      id: "CaptureRefusal",
      description: "Ingest's refusals. Nothing is stored, except for `payload_too_large`, whose metadata is stored under `id`.",
      examples: [{ ok: false, error: "endpoint_paused", message: "This endpoint is paused." }],
    },
  ],
  [
    forwardFailure,
    {
      id: "ForwardFailure",
      description: "What a `proxy` endpoint's sender gets when the destination could not be reached: the capture is stored all the same.",
      examples: [{ error: "forward_failed", reason: "connection_refused" }],
    },
  ],
]);

/** Interface 0.1.0's resources, in which no response field is marked required. */
const INTERFACE_RESOURCES = new Set(["Endpoint", "EndpointList", "EventSummary", "EventList", "EventDetail", "CurlExport", "ReplayResult"]);

export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function idOf(schema: z.ZodType): string {
  const id = (REQUESTS.get(schema) ?? RESPONSES.get(schema))?.id;
  if (!id) throw new Error("a route names a schema that is not a named component");
  return id;
}

/** Interface 0.1.0 marks no response field required; the gateway's own types are stricter. */
function withoutRequired(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(withoutRequired);
  if (typeof node !== "object" || node === null) return;
  delete (node as Json).required;
  for (const value of Object.values(node)) withoutRequired(value);
}

function components(): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  const all = [...REQUESTS, ...RESPONSES];
  for (const [schema, { id }] of all) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    io: "input",
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
  }) as { schemas: Record<string, Json> };
  const responseIds = new Set([...RESPONSES.values()].map((c) => c.id));
  for (const [, { id, description, examples }] of all) {
    const schema = out.schemas[id]!;
    delete schema.$schema;
    delete schema.$id;
    delete schema.id;
    schema.description = description;
    if (examples) schema.examples = examples;
    if (!responseIds.has(id)) continue;
    if (INTERFACE_RESOURCES.has(id)) withoutRequired(schema);
    // Responses are closed too: a field the document does not name is a defect.
    if (schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  }
  return out.schemas;
}

/** Query parameters, each described by the input (text) side of its schema. */
function queryParameters(schema: z.ZodType): Json[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties: Record<string, Json> };
  return Object.entries(json.properties).map(([name, s]) => {
    const { $schema: _ignored, description, ...clean } = s;
    return { name, in: "query", required: false, schema: clean, ...(description ? { description } : {}) };
  });
}

/**
 * Path ids, described by the collection they index (the segment before them): `{id}` in
 * `/v1/endpoints/{id}` is an endpoint's. A new collection adds its line here.
 */
const PATH_IDS: Record<string, string> = {
  endpoints:
    "The endpoint's id: a UUID, in either case, as in the Endpoint's `id` (and at the end of its `webhookUrl`). " +
    "Not a UUID: 400 `validation_failed`; no endpoint of the account has it: 404 `not_found`.",
  events:
    "The event's id: a UUID, as in the event list's `id` and in ingest's `{\"ok\":true,\"id\"}` answer. " +
    "An id that is not one of this endpoint's events is 404 `not_found`.",
  keys:
    "The API key's id: a UUID, as in the key list's `id` (not the key itself). A key of another account, or one wider " +
    "than the calling key, is 404 `not_found`.",
  "alert-channels": "The alert channel's id: a UUID, as in the channel list's `id`. A channel of another account, or one beyond the calling key's reach, is 404 `not_found`.",
  listeners:
    "The listener's id: a UUID the listener chose when it started (`whc listen` makes a new one each run), as in the " +
    "listener list's `id`. Not a UUID: 400 `validation_failed`.",
  redeliveries:
    "The bulk redelivery job's id: a UUID, as in the answer that started it. Not a UUID: 400 `validation_failed`; a job of " +
    "another endpoint (or account) is 404 `not_found`.",
};

function pathParameters(r: Route): Json[] {
  const { path } = r;
  const segments = path.split("/");
  return pathParams(path).map((name) => {
    const other = r.params?.[name];
    if (other) {
      const { $schema: _ignored, ...schema } = z.toJSONSchema(other.schema, { io: "input" }) as Json;
      return { name, in: "path", required: true, schema, description: other.description };
    }
    const collection = segments[segments.indexOf(`{${name}}`) - 1] ?? "";
    const description = PATH_IDS[collection];
    return { name, in: "path", required: true, schema: { type: "string", format: "uuid" }, ...(description ? { description } : {}) };
  });
}

const requestIdHeader = {
  description: "The request reference, to quote when asking about a request; equals `requestId` in an error reply.",
  schema: { type: "string" },
};

function errorResponse(description: string, headers: Json = {}): Json {
  return {
    description,
    headers: { "X-Request-Id": requestIdHeader, ...headers },
    content: { "application/json": { schema: ref("ErrorReply") } },
  };
}

/** Every authenticated route can answer these (429: the key's request rate, ADR 0035). */
const COMMON_ERRORS = [401, 404, 405, 429, 500, 503];

/** What a 429 carries, whichever refusal it is (docs/api.md, "Quotas"). */
const TOO_MANY_HEADERS: Json = {
  "Retry-After": {
    schema: { type: "integer" },
    description:
      "Seconds to wait: to the next UTC midnight (replay_limit_exceeded); at least 1 (quota_exceeded api_rate and waits); absent for the endpoint and key quotas.",
  },
  "RateLimit-Limit": {
    schema: { type: "integer" },
    description: "replay_limit_exceeded: the account's daily replay allowance; quota_exceeded (api_rate): the key's requests per second.",
  },
  "RateLimit-Remaining": { schema: { type: "integer" }, description: "0 (with RateLimit-Limit)." },
  "RateLimit-Reset": { schema: { type: "integer" }, description: "Seconds until requests are admitted again (with RateLimit-Limit)." },
};

/** `code`: its fixed message, for each code the status stands for. */
function errorCodes(status: number): string {
  const codes = new Map(Object.values(errorTable).filter((e) => e.status === status).map((e) => [e.code, e.message]));
  return [...codes].map(([code, message]) => `\`${code}\`: ${message}`).join(" ");
}

function errors(statuses: number[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const status of [...new Set(statuses)].sort((a, b) => a - b)) {
    const headers: Json = {};
    if (status === 401) headers["WWW-Authenticate"] = { schema: { type: "string" }, description: "`Bearer`: the scheme the API expects." };
    if (status === 405) headers.Allow = { schema: { type: "string" }, description: "The methods the path allows." };
    if (status === 429) Object.assign(headers, TOO_MANY_HEADERS);
    if (status === 503) headers["Retry-After"] = { schema: { type: "integer" }, description: "Seconds to wait: 1 for egress capacity, else 5." };
    out[String(status)] = errorResponse(errorCodes(status), headers);
  }
  return out;
}

function success(r: Route): Record<string, Json> {
  const { status, description, schema, contentType, headers } = r.success;
  let content: Json | undefined;
  if (schema) content = { "application/json": { schema: ref(idOf(schema)) } };
  else if (contentType) content = { [contentType]: { schema: { type: "string" } } };
  else if (status !== 204) content = { "application/json": { schema: { type: "object" } } };
  return {
    [String(status)]: {
      description,
      headers: { "X-Request-Id": requestIdHeader, ...headers },
      ...(content ? { content } : {}),
    },
  };
}

function operation(r: Route): Json {
  return {
    operationId: r.operationId,
    summary: r.summary,
    description: r.description,
    tags: [...r.tags],
    ...(r.open ? { security: [] } : {}),
    ...(r.extension ? { "x-extension": true } : {}),
    ...(r.scope && r.scope !== "any" ? { "x-scope": r.scope } : {}),
    ...(r.query || r.headers ? { parameters: [...(r.query ? queryParameters(r.query) : []), ...(r.headers ?? [])] } : {}),
    ...(r.body ? { requestBody: { required: r.bodyRequired ?? false, content: { "application/json": { schema: ref(idOf(r.body)) } } } } : {}),
    responses: {
      ...success(r),
      ...r.otherResponses,
      ...errors(r.open ? r.errors : [...r.errors, ...COMMON_ERRORS, ...(r.scope === "any" ? [] : [403])]),
    },
  };
}

function paths(routes: readonly Route[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const r of routes) {
    const item = (out[r.path] ??= {});
    const params = pathParameters(r);
    if (params.length > 0) item.parameters = params;
    item[r.method.toLowerCase()] = operation(r);
  }
  return out;
}

const DESCRIPTION = `Webhook Capture receives webhooks on named endpoints and keeps every request: list, search and long-poll them,
read one whole with its diagnosis, export them, replay them to another URL, or forward them as they arrive.

**Two surfaces.** This API (\`/v1\`) is how you manage endpoints and read events; it is served by the gateway.
Webhook senders call an endpoint's \`webhookUrl\` instead, on the receiving surface served by ingest at its own
address (the \`receiving\` operations, which name their own server).

**Authentication.** Every \`/v1\` operation needs an API key: \`Authorization: Bearer whc_...\`. A missing, unknown,
revoked or expired key is 401 \`unauthorized\`. Health, metrics and this document need none.

**Scopes.** Each operation names the scope it needs in \`x-scope\` (\`endpoints:read\`, \`endpoints:write\`,
\`events:read\`, \`events:write\`, \`events:replay\`, \`keys:write\`, \`audit:read\`, \`alerts:write\`); a key without it is 403
\`forbidden\` with \`details.scope\` naming it. \`*\` holds every scope; \`dashboard\` is the dashboard's session. A key
restricted to some endpoints sees only those: any other endpoint id is 404, exactly as an unknown one.

**Errors.** Every error is JSON: \`{"error": CODE, "message": TEXT, "details": {}, "requestId": ID}\`, one fixed
message per code; \`validation_failed\` names the offending field (a dotted path into the body, or the query
parameter) in \`details.field\`, and why in \`details.reason\`. An id of another account's resource is 404, exactly as
an unknown one. Quote \`requestId\` (also the \`X-Request-Id\` header) when asking about a request.

**Extensions.** Interface 0.1.0 is the contract; operations and fields marked \`x-extension: true\` go beyond it.`;

/** What the service sends (OpenAPI 3.1 `webhooks`): a webhook alert channel's POST (design §18). */
function alertWebhooks(): Json {
  const header = (name: string, description: string) => ({ name, in: "header", required: true, schema: { type: "string" }, description });
  return {
    alert: {
      post: {
        operationId: "alertChannelMessage",
        summary: "An alert, as a webhook alert channel receives it",
        description:
          "Sent to a `webhook` alert channel's URL, signed as Standard Webhooks with the channel's secret: verify it with " +
          "any Standard Webhooks library (`new Webhook(secret).verify(body, headers)`). `webhook-id` is the alert's id, the " +
          "same on every attempt: drop a repeat. Answer 2xx; a network error, 408, 429 or 5xx is retried like a relay " +
          "delivery, any other answer ends it. A `slack` channel receives `{\"text\": ...}` instead.",
        tags: ["alerts"],
        "x-extension": true,
        security: [],
        parameters: [
          header("webhook-id", "The alert's id (a UUID)."),
          header("webhook-timestamp", "Unix seconds when this attempt was signed."),
          header("webhook-signature", "`v1,<base64 HMAC-SHA256 of \"<id>.<timestamp>.<body>\" with the secret's bytes after whsec_>`."),
        ],
        requestBody: { required: true, content: { "application/json": { schema: ref("AlertMessage") } } },
        responses: { "204": { description: "Received (any 2xx)." } },
      },
    },
  };
}

export interface DocumentOptions {
  /** WHC_INGEST_PUBLIC_URL: the server of the receiving operations. */
  ingestPublicUrl: string;
}

/**
 * The gateway's server is the relative URL `/`: resolved against the address the document
 * was fetched from, it is right behind any proxy or TLS front without knowing its name.
 */
export function buildOpenApiDocument(routes: readonly Route[], options: DocumentOptions): Json {
  return {
    openapi: "3.1.0",
    info: { title: "Webhook Capture", version: "0.1.0", description: DESCRIPTION },
    servers: [{ url: "/", description: "The gateway that served this document (a relative URL, resolved against the document's own address)." }],
    security: [{ bearer: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: { ...paths(routes), ...receivingPaths(options.ingestPublicUrl) },
    webhooks: alertWebhooks(),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key: `whc_` and 32 or more letters and digits." } },
      schemas: components(),
    },
  };
}
