import {
  ANY_EVENT_TYPE,
  SCHEMA_LIMITS,
  eventTypeParam,
  jsonSchemaDocument,
  schemaList,
  type JsonSchemaDocument,
  type SchemaListJson,
} from "@whc/api-model";
import { schemaJsonSchema, schemaSummaryJson } from "@whc/api-model/present";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";

const LEARNING =
  `The catalog learns from every capture whose body is a JSON object (up to ${SCHEMA_LIMITS.bodyBytes / 1024} KiB), after it is stored: ` +
  "for each path (dotted, `data.object.amount`; an array's elements `items[]`; keys that look like data rather than names, " +
  "such as ids, dates or addresses, stand as `*`) the JSON types seen there and how often it was present. No value is ever kept. " +
  `At most ${SCHEMA_LIMITS.pathsPerType} paths per event type and ${SCHEMA_LIMITS.typesPerEndpoint} event types per endpoint.`;

/** Schemas and drift (design §19; ADR 0090): what the catalog learned of an endpoint's JSON bodies. */
export function schemaRoutes(deps: GatewayDeps): Route[] {
  const { catalog } = deps;
  return [
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/schemas",
      scope: "events:read",
      operationId: "listSchemas",
      summary: "List the schemas learned from an endpoint's captures",
      description:
        `One entry per event type (\`canonicalEventType\`, or \`*\` for captures without one), by event type. ${LEARNING}\n\n` +
        `Once a type has ${SCHEMA_LIMITS.samplesBeforeDrift} samples, a capture that adds a path never seen, lacks a path present in at least ` +
        `${SCHEMA_LIMITS.expectedRatio * 100} % of the samples, or brings a new type at a path shows \`schemaDrift\` in its detail ` +
        "(list filter `schemaDrift=true`). Learning happens after the capture was answered: a capture's drift shows a moment later.",
      tags: ["schemas"],
      extension: true,
      success: { status: 200, schema: schemaList, description: "The endpoint's learned schemas." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<SchemaListJson> {
        const { schemas } = await catalog.listSchemas({ accountId: auth.accountId, endpointId: params.endpointId! });
        return { items: schemas.map(schemaSummaryJson) };
      },
    }),
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/schemas/{eventType}",
      params: {
        eventType: {
          schema: eventTypeParam,
          description: `The event type, as \`canonicalEventType\` carries it (URL-encoded: Shopify's \`orders/create\` is \`orders%2Fcreate\`), or \`${ANY_EVENT_TYPE}\` for captures without one.`,
        },
      },
      scope: "events:read",
      operationId: "getSchema",
      summary: "Get one event type's learned schema as a JSON Schema",
      description:
        `What was learned of this event type's JSON bodies as a JSON Schema (draft 2020-12): the types at each path, and \`required\` ` +
        "for members present every time their object was (outside arrays). Every body learned validates against it; it states " +
        `shapes only, never a value, format or enum. ${LEARNING}\n\nErrors: 404 \`not_found\` when nothing was learned for the type.`,
      tags: ["schemas"],
      extension: true,
      success: { status: 200, schema: jsonSchemaDocument, description: "A JSON Schema (draft 2020-12) document." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<JsonSchemaDocument> {
        const endpointId = params.endpointId!;
        const [{ schema }, { endpoint }] = await Promise.all([
          catalog.getSchema({ accountId: auth.accountId, endpointId, eventType: params.eventType! }),
          catalog.getEndpoint({ accountId: auth.accountId, endpointId }),
        ]);
        return schemaJsonSchema(schema!, endpoint!.slug);
      },
    }),
  ];
}
