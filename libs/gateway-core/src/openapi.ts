import { z } from "zod";
import {
  curlExport,
  endpoint,
  endpointList,
  errorReply,
  eventDetail,
  eventList,
  eventSummary,
  forwardAttempt,
  health,
  providerInfo,
  providerList,
  readiness,
  recordAttemptRequest,
  replayRequest,
  replayResult,
} from "@whc/api-model";
import { errorTable } from "./errors-table.js";
import { pathParams, type Route } from "./route.js";
import { RATE_LIMIT_HEADERS } from "./routes/v1/event-actions.js";
import { createEndpointBody, updateEndpointBody } from "./routes/v1/endpoints.js";
import { redeliverBody } from "./routes/v1/forwarding.js";

/**
 * The OpenAPI 3.1 document, generated from the route table and the zod schemas of
 * @whc/api-model that validate requests and type answers: one source for both.
 */
type Json = Record<string, unknown>;

/** Named components. Requests keep their `required` lists; so do error replies and extensions. */
const REQUESTS = new Map<z.ZodType, string>([
  [createEndpointBody, "CreateEndpointRequest"],
  [updateEndpointBody, "UpdateEndpointRequest"],
  [replayRequest, "ReplayRequest"],
  [redeliverBody, "RedeliverRequest"],
  [recordAttemptRequest, "RecordAttemptRequest"],
]);
const RESPONSES = new Map<z.ZodType, string>([
  [endpoint, "Endpoint"],
  [endpointList, "EndpointList"],
  [eventSummary, "EventSummary"],
  [eventList, "EventList"],
  [eventDetail, "EventDetail"],
  [curlExport, "CurlExport"],
  [replayResult, "ReplayResult"],
  [forwardAttempt, "ForwardAttempt"],
  [errorReply, "ErrorReply"],
  [health, "Health"],
  [readiness, "Readiness"],
  [providerInfo, "ProviderInfo"],
  [providerList, "ProviderList"],
]);

/** Interface 0.1.0's resources, in which no response field is marked required. */
const INTERFACE_RESOURCES = new Set(["Endpoint", "EndpointList", "EventSummary", "EventList", "EventDetail", "CurlExport", "ReplayResult"]);

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function idOf(schema: z.ZodType): string {
  const id = REQUESTS.get(schema) ?? RESPONSES.get(schema);
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
  for (const [schema, id] of [...REQUESTS, ...RESPONSES]) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    io: "input",
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
  }) as { schemas: Record<string, Json> };
  const responseIds = new Set(RESPONSES.values());
  for (const [id, schema] of Object.entries(out.schemas)) {
    delete schema.$schema;
    delete schema.$id;
    delete schema.id;
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
    return { name, in: "query", required: false, schema: clean, description: description ?? "" };
  });
}

const requestIdHeader = {
  description: "The request reference; equals `requestId` in an error reply.",
  schema: { type: "string" },
};

function errorResponse(description: string, headers: Json = {}): Json {
  return {
    description,
    headers: { "X-Request-Id": requestIdHeader, ...headers },
    content: { "application/json": { schema: ref("ErrorReply") } },
  };
}

/** Every authenticated route can answer these. */
const COMMON_ERRORS = [401, 404, 405, 500, 503];

function errors(statuses: number[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const status of [...new Set(statuses)].sort((a, b) => a - b)) {
    const codes = [...new Set(Object.values(errorTable).filter((e) => e.status === status).map((e) => `\`${e.code}\``))];
    const headers: Json = {};
    if (status === 401) headers["WWW-Authenticate"] = { schema: { type: "string" }, description: "Bearer" };
    if (status === 405) headers.Allow = { schema: { type: "string" }, description: "The methods the path allows." };
    if (status === 429) Object.assign(headers, RATE_LIMIT_HEADERS, { "Retry-After": { schema: { type: "integer" } } });
    if (status === 503) headers["Retry-After"] = { schema: { type: "integer" }, description: "1 for egress capacity, else 5." };
    out[String(status)] = errorResponse(`Error: ${codes.join(", ")}.`, headers);
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
    ...(r.open ? { security: [] } : {}),
    ...(r.extension ? { "x-extension": true } : {}),
    ...(r.query || r.headers ? { parameters: [...(r.query ? queryParameters(r.query) : []), ...(r.headers ?? [])] } : {}),
    ...(r.body ? { requestBody: { required: r.bodyRequired ?? false, content: { "application/json": { schema: ref(idOf(r.body)) } } } } : {}),
    responses: {
      ...success(r),
      ...r.otherResponses,
      ...errors(r.open ? r.errors : [...r.errors, ...COMMON_ERRORS]),
    },
  };
}

function paths(routes: readonly Route[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const r of routes) {
    const item = (out[r.path] ??= {});
    const params = pathParams(r.path);
    if (params.length > 0) {
      item.parameters = params.map((name) => ({ name, in: "path", required: true, schema: { type: "string", format: "uuid" } }));
    }
    item[r.method.toLowerCase()] = operation(r);
  }
  return out;
}

export function buildOpenApiDocument(routes: readonly Route[], serverUrl?: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Webhook Capture",
      version: "0.1.0",
      description:
        "Capture inbound webhooks on named endpoints; list, search, tail, read, delete, export as cURL and replay them. " +
        "Fields marked `x-extension: true` go beyond interface 0.1.0.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key: `whc_` and 32+ letters and digits." } },
      schemas: components(),
    },
    paths: paths(routes),
  };
}
