import type { Tag } from "./openapi-tags.js";

/**
 * The receiving surface (ingest's `/h/{endpointId}`) as OpenAPI operations of the gateway's
 * document, each naming its own server (WHC_INGEST_PUBLIC_URL): one document describes both
 * surfaces, and the tools that render it (Redoc, Swagger UI) show these operations with their
 * own base URL. Ingest is not a route of the gateway, so its operations are written here, from
 * docs/api.md's "The receiving surface" (ADR 0040); the composition tests check ingest's real
 * answers against them.
 */
type Json = Record<string, unknown>;

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const TAGS: Tag[] = ["receiving"];

const retryAfter = (description: string): Json => ({ "Retry-After": { schema: { type: "integer" }, description } });

const RESPONSES: Record<string, Json> = {
  "200": {
    description:
      'Stored durably (committed before the answer), and answered as the endpoint is configured to answer. Without a configured `response`: `{"ok":true,"id":EVENT_ID}`, ' +
      "the id of the new event in `/v1`.",
    content: { "application/json": { schema: ref("CaptureAck") } },
  },
  "401": {
    description:
      "The endpoint's `inbound` protection wants credentials the request lacks: its `basicAuth` (answered with `WWW-Authenticate: Basic realm=\"webhook\"`) " +
      "or its `headerToken`. Nothing is stored; the endpoint's `rejectedCount` counts it.",
    headers: { "WWW-Authenticate": { schema: { type: "string" }, description: "`Basic realm=\"webhook\"` when the endpoint has `basicAuth`." } },
    content: { "application/json": { schema: ref("CaptureRefusal"), example: { ok: false, error: "unauthorized", message: "This endpoint requires credentials." } } },
  },
  "403": {
    description:
      "The sender's address (the socket's peer, or `X-Forwarded-For` past `WHC_TRUSTED_PROXIES`) is not in the endpoint's `inbound.allowIps`. Nothing is stored; counted in `rejectedCount`.",
    content: { "application/json": { schema: ref("CaptureRefusal"), example: { ok: false, error: "forbidden", message: "This endpoint does not accept requests from this address." } } },
  },
  "405": {
    description: "The method is not one of the endpoint's `inbound.methods`. Nothing is stored; counted in `rejectedCount`.",
    headers: { Allow: { schema: { type: "string" }, description: "The methods the endpoint accepts." } },
    content: { "application/json": { schema: ref("CaptureRefusal"), example: { ok: false, error: "method_not_allowed", message: "This endpoint does not accept this method." } } },
  },
  "408": {
    description:
      "`request_timeout`: nothing of the body arrived for `WHC_INGEST_BODY_IDLE_MS` (10 s by default), or the request was not finished in time (the HTTP server's own 408). Nothing is stored.",
    content: { "application/json": { schema: ref("CaptureRefusal") } },
  },
  "404": {
    description:
      "No endpoint has this id (or the part after `/h/` is not a UUID), or it was deleted before the capture committed. Nothing is stored.",
    content: { "application/json": { schema: ref("CaptureRefusal"), example: { ok: false, error: "not_found", message: "No endpoint receives at this URL." } } },
  },
  "413": {
    description:
      "The body passed `WHC_MAX_INBOUND_BODY_BYTES` (10 MiB by default). Only the request's metadata is stored, as the event `id` (its `responseCode` is 413); " +
      "the connection is closed.",
    headers: { Connection: { schema: { type: "string", enum: ["close"] }, description: "`close`: the rest of the body is not read." } },
    content: { "application/json": { schema: ref("CaptureRefusal"), example: { ok: false, error: "payload_too_large", id: "019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8b" } } },
  },
  "431": { description: "The header section passed 64 KiB. Nothing is stored; the answer has no body." },
  "502": {
    description: "A `proxy` endpoint's destination could not be reached or gave no usable answer. The capture is stored; the sender should retry.",
    content: { "application/json": { schema: ref("ForwardFailure") } },
  },
  "503": {
    description:
      "Nothing is stored; retry after `Retry-After` seconds. `error` says why: `endpoint_paused` (the endpoint's `status` is `paused`; Retry-After 60), " +
      "`service_unavailable` (the catalog or crypto service cannot be reached, or the store cannot commit; Retry-After 5), or `overloaded` " +
      "(ingest already holds as many request bodies as `WHC_INGEST_MAX_INFLIGHT_BYTES` allows, or as the sender's address or the endpoint may hold of it; Retry-After 1).",
    headers: retryAfter("Seconds to wait before retrying: 60 when paused, 5 on an outage, 1 when overloaded."),
    content: { "application/json": { schema: ref("CaptureRefusal") } },
  },
  "508": {
    description:
      "`forward_loop`: the request arrived with `X-Whc-Hop` at `WHC_MAX_HOPS` (3 by default): it has been forwarded that many times, by endpoints of " +
      "this or another deployment. It is stored, as the event `id` (its `responseCode` is 508), and not forwarded again.",
    content: {
      "application/json": {
        schema: ref("CaptureRefusal"),
        example: { ok: false, error: "forward_loop", message: "This request has been forwarded too many times; it is stored and not forwarded again.", id: "019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8b" },
      },
    },
  },
  "504": {
    description: "A `proxy` endpoint's destination did not answer within the endpoint's `forward.timeoutMs`. The capture is stored.",
    content: { "application/json": { schema: ref("ForwardFailure"), example: { error: "forward_failed", reason: "timeout" } } },
  },
  default: {
    description:
      "Any other answer the endpoint is configured to give: its `response` (a status from 200 to 599 with its headers and body, chosen by the first " +
      "matching rule, else the sequence, else the top-level fields, after `delayMs`), a provider's verification handshake, or, for a `proxy` " +
      "endpoint, the destination's own answer. The capture is stored first, whatever the status; the status sent is the event's `responseCode`.",
    content: { "*/*": { schema: {} } },
  },
};

const COMMON = `Senders call an endpoint's \`webhookUrl\` (\`{WHC_INGEST_PUBLIC_URL}/h/{endpointId}\`) with any method, and any
sub-path and query after it: \`/h/{endpointId}/orders/7?source=shop\` is captured like \`/h/{endpointId}\`, and the event's
\`path\` keeps \`/orders/7?source=shop\` exactly as it arrived (OpenAPI cannot name a path of any depth, so only the bare
URL is listed). No API key: the URL is the credential.

Every request is stored before it is answered, with its method, headers, body (up to \`WHC_MAX_STORED_BODY_BYTES\`, 1 MiB
by default; beyond that it is stored truncated, but signatures are checked on every byte) and the sender's address.
When the endpoint has a \`secret\`, the signature is verified with its provider's scheme; the verdict is recorded on the
event (\`verification\`, \`diagnostic.signature\`) and never changes the answer. A sender that sends
\`Expect: 100-continue\` is told 401, 403, 404, 405, 413 or 503 before it sends its body. Malformed HTTP (400) is answered by
the HTTP server itself, and nothing is stored. Every answer to a stored capture carries \`X-Content-Type-Options: nosniff\`
and \`Content-Security-Policy: sandbox\`.`;

interface Method {
  method: "get" | "post" | "put" | "patch" | "delete";
  summary: string;
  extra: string;
}

const HANDSHAKES = `**Verification handshakes** (unless the endpoint's \`response.handshakes\` is \`false\`) are answered as each
provider documents, and stored too: \`GET ?hub.mode=subscribe&hub.verify_token=T&hub.challenge=C\` (Meta, WhatsApp:
\`C\` when \`T\` is the endpoint's secret, else 403), \`GET ?crc_token=C\` (X), \`?validationToken=V\` (Microsoft Graph),
\`GET ?challenge=C\` (Dropbox), a Slack \`url_verification\` or Zoom \`endpoint.url_validation\` POST, an Asana
\`X-Hook-Secret\` header.`;

const METHODS: Method[] = [
  {
    method: "post",
    summary: "Send a webhook (POST)",
    extra: "Most providers POST. The body may be any bytes in any media type; it is kept exactly as sent (no `Content-Encoding` undone, chunks joined).",
  },
  {
    method: "get",
    summary: "Send a webhook or a verification handshake (GET)",
    extra: `Some senders deliver by GET, with the data in the query; providers also use GET to check a URL before they send to it.\n\n${HANDSHAKES}`,
  },
  { method: "put", summary: "Send a webhook (PUT)", extra: "Captured as a POST is; the body may be any bytes." },
  { method: "patch", summary: "Send a webhook (PATCH)", extra: "Captured as a POST is; the body may be any bytes." },
  {
    method: "delete",
    summary: "Send a webhook (DELETE)",
    extra: "Captured as any other method is; it deletes nothing. HEAD, OPTIONS and any other method are captured the same way.",
  },
];

const BODY: Json = {
  required: false,
  description: "Any bytes, any media type, up to `WHC_MAX_INBOUND_BODY_BYTES` (10 MiB by default; beyond it: 413).",
  content: { "*/*": { schema: {} } },
};

function captureOperation({ method, summary, extra }: Method, servers: Json[]): Json {
  return {
    operationId: `capture${method[0]!.toUpperCase()}${method.slice(1)}`,
    summary,
    description: `${extra}\n\n${COMMON}`,
    tags: TAGS,
    // On each operation rather than the path item: OpenAPI said an operation's override the
    // document's from 3.0.0, a path item's only from 3.0.4 and 3.1.1 (ADR 0040).
    servers,
    security: [],
    ...(method === "get" || method === "delete" ? {} : { requestBody: BODY }),
    responses: RESPONSES,
  };
}

export function receivingPaths(ingestPublicUrl: string): Record<string, Json> {
  const servers = [{ url: ingestPublicUrl, description: "Ingest's public address (WHC_INGEST_PUBLIC_URL), where every webhookUrl points." }];
  return {
    "/h/{endpointId}": {
      parameters: [
        {
          name: "endpointId",
          in: "path",
          required: true,
          schema: { type: "string", format: "uuid" },
          description: "The endpoint's id, in either case: the last segment of its `webhookUrl`.",
        },
      ],
      ...Object.fromEntries(METHODS.map((m) => [m.method, captureOperation(m, servers)])),
    },
  };
}
