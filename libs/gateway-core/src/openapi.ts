import { z } from "zod";
import { errorTable } from "./errors-table.js";
import { createEndpointSchema, listEventsQuerySchema, curlQuerySchema, replayBodySchema } from "./schemas.js";
import {
  curlExportResponse,
  endpointListResponse,
  endpointResponse,
  errorReplyResponse,
  eventDetailResponse,
  eventListResponse,
  eventSummaryResponse,
  healthResponse,
  replayResponse,
} from "./response-schemas.js";

/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests (and the
 * response schemas the e2e suite checks live answers against): one source of truth.
 */
type Json = Record<string, unknown>;

const RESPONSES = new Set(["Endpoint", "EndpointList", "EventSummary", "EventList", "EventDetail", "CurlExport", "ReplayResult", "ErrorReply", "Health"]);

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function components(): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  const add = (schema: z.ZodType, id: string) => registry.add(schema, { id });
  add(createEndpointSchema, "CreateEndpointRequest");
  add(replayBodySchema, "ReplayRequest");
  add(endpointResponse, "Endpoint");
  add(endpointListResponse, "EndpointList");
  add(eventSummaryResponse, "EventSummary");
  add(eventListResponse, "EventList");
  add(eventDetailResponse, "EventDetail");
  add(curlExportResponse, "CurlExport");
  add(replayResponse, "ReplayResult");
  add(errorReplyResponse, "ErrorReply");
  add(healthResponse, "Health");
  const out = z.toJSONSchema(registry, {
    io: "input",
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
  }) as { schemas: Record<string, Json> };
  for (const [id, schema] of Object.entries(out.schemas)) {
    delete schema.$schema;
    delete schema.$id;
    delete schema.id;
    // Responses are closed too: a field the document does not name is a defect.
    if (RESPONSES.has(id) && schema.properties && schema.additionalProperties === undefined) {
      schema.additionalProperties = false;
    }
  }
  return out.schemas;
}

/** Query parameters, each described by the input (string) side of its schema. */
function queryParameters(schema: z.ZodType): Json[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
    properties: Record<string, Json>;
  };
  const docs: Record<string, string> = {
    before: "Cursor: the page strictly older than (before, beforeId). Needs beforeId.",
    beforeId: "Cursor pair of `before`.",
    after: "Cursor: the `limit` events strictly newer than (after, afterId), closest to it. Needs afterId.",
    afterId: "Cursor pair of `after`.",
    from: "receivedAt >= from (inclusive).",
    to: "receivedAt < to (exclusive).",
    eventType: "canonicalEventType equals.",
    provider: "provider equals.",
    responseCode: "responseCode equals (int32).",
    status: "verification equals: verified, failed or unverified.",
    search: "Every word (letters and digits, case-insensitive) must occur in the body.",
    wait: "Seconds (0-60, `25` or `25s`) to hold an empty page until a capture arrives.",
    limit: "Page size, 1-200, default 50.",
    unmasked: "true: header values are not masked.",
  };
  return Object.entries(json.properties).map(([name, s]) => {
    const { $schema: _ignored, ...clean } = s;
    return { name, in: "query", required: false, schema: clean, description: docs[name] ?? "" };
  });
}

const requestIdHeader = {
  description: "The request reference; equals `requestId` in an error reply.",
  schema: { type: "string" },
};
const rateLimitHeaders = {
  "RateLimit-Limit": { description: "The account's daily replay allowance.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Replays left today (UTC).", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds to the next UTC midnight.", schema: { type: "integer" } },
};

function errorResponse(description: string, headers: Json = {}): Json {
  return {
    description,
    headers: { "X-Request-Id": requestIdHeader, ...headers },
    content: { "application/json": { schema: ref("ErrorReply") } },
  };
}

function errors(...statuses: number[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const status of statuses) {
    const codes = [...new Set(Object.values(errorTable).filter((e) => e.status === status).map((e) => `\`${e.code}\``))];
    const headers: Json = {};
    if (status === 401) headers["WWW-Authenticate"] = { schema: { type: "string" }, description: "Bearer" };
    if (status === 405) headers.Allow = { schema: { type: "string" }, description: "The methods the path allows." };
    if (status === 429) Object.assign(headers, rateLimitHeaders, { "Retry-After": { schema: { type: "integer" } } });
    if (status === 503) headers["Retry-After"] = { schema: { type: "integer" }, description: "1 for egress capacity, else 5." };
    out[String(status)] = errorResponse(`Error: ${codes.join(", ")}.`, headers);
  }
  return out;
}

function ok(status: number, schemaId: string | undefined, description: string, headers: Json = {}): Record<string, Json> {
  return {
    [String(status)]: {
      description,
      headers: { "X-Request-Id": requestIdHeader, ...headers },
      ...(schemaId ? { content: { "application/json": { schema: ref(schemaId) } } } : {}),
    },
  };
}

const pathId = (name: string) => ({ name, in: "path", required: true, schema: { type: "string", format: "uuid" } });
const common = [401, 404, 405, 500, 503];

export function buildOpenApiDocument(serverUrl?: string): Json {
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
    paths: {
      "/v1/endpoints": {
        get: {
          operationId: "listEndpoints",
          responses: { ...ok(200, "EndpointList", "The account's endpoints."), ...errors(...common) },
        },
        post: {
          operationId: "createEndpoint",
          requestBody: { required: false, content: { "application/json": { schema: ref("CreateEndpointRequest") } } },
          responses: {
            ...ok(201, "Endpoint", "Created.", { Location: { schema: { type: "string" } } }),
            ...errors(400, 409, 413, 415, ...common),
          },
        },
      },
      "/v1/endpoints/{id}": {
        parameters: [pathId("id")],
        get: { operationId: "getEndpoint", responses: { ...ok(200, "Endpoint", "The endpoint."), ...errors(400, ...common) } },
        delete: {
          operationId: "deleteEndpoint",
          responses: { ...ok(204, undefined, "Deleted, with its events."), ...errors(400, ...common) },
        },
      },
      "/v1/endpoints/{endpointId}/events": {
        parameters: [pathId("endpointId")],
        get: {
          operationId: "listEvents",
          parameters: queryParameters(listEventsQuerySchema),
          responses: { ...ok(200, "EventList", "Newest first by (receivedAt, id)."), ...errors(400, ...common) },
        },
      },
      "/v1/endpoints/{endpointId}/events/{eventId}": {
        parameters: [pathId("endpointId"), pathId("eventId")],
        get: {
          operationId: "getEvent",
          responses: { ...ok(200, "EventDetail", "The event, body decrypted; sets readAt."), ...errors(400, ...common) },
        },
        delete: {
          operationId: "deleteEvent",
          responses: { ...ok(204, undefined, "Deleted (idempotent)."), ...errors(400, ...common) },
        },
      },
      "/v1/endpoints/{endpointId}/events/{eventId}/curl": {
        parameters: [pathId("endpointId"), pathId("eventId")],
        get: {
          operationId: "exportCurl",
          parameters: queryParameters(curlQuerySchema),
          responses: { ...ok(200, "CurlExport", "A single-line bash cURL command."), ...errors(400, ...common) },
        },
      },
      "/v1/endpoints/{endpointId}/events/{eventId}/replay": {
        parameters: [pathId("endpointId"), pathId("eventId")],
        post: {
          operationId: "replayEvent",
          parameters: [
            {
              name: "X-Whc-Client",
              in: "header",
              required: false,
              "x-extension": true,
              schema: { type: "string", enum: ["api", "dashboard"] },
              description: "`dashboard`: the endpoint's replayFromDashboard applies instead of replayFromApi.",
            },
          ],
          requestBody: { required: true, content: { "application/json": { schema: ref("ReplayRequest") } } },
          responses: {
            ...ok(200, "ReplayResult", "The target was contacted (or failed at the network level).", rateLimitHeaders),
            ...errors(400, 403, 413, 415, 429, ...common),
          },
        },
      },
      "/v1/openapi.json": {
        get: {
          operationId: "openApiDocument",
          security: [],
          "x-extension": true,
          responses: { "200": { description: "This document.", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
      "/healthz": {
        get: {
          operationId: "health",
          security: [],
          "x-extension": true,
          responses: {
            ...ok(200, "Health", "Every dependency answers."),
            "503": { description: "A dependency does not answer.", content: { "application/json": { schema: ref("Health") } } },
          },
        },
      },
    },
  };
}
