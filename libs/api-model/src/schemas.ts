import { z } from "zod";
import { dateTime, extension } from "./common.js";
import { SCHEMA_LIMITS } from "./values.js";

/**
 * Schemas and drift (design §19; ADRs 0090, 0091): per endpoint and event type the catalog
 * learns which paths a JSON body has, with which JSON types and how often, and marks a capture
 * whose shape departs from what it learned.
 */

/** The JSON types a path can hold, as JSON Schema names them; `integer` is a number without a fraction. */
export const JSON_TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"] as const;
export type JsonType = (typeof JSON_TYPES)[number];

/** The event type of captures that have none. */
export const ANY_EVENT_TYPE = "*";

/** What drift can be: a path never seen, a path nearly always there and now absent, a type not seen at a path. */
export const DRIFT_CHANGES = ["added", "missing", "type_changed"] as const;
export type DriftChange = (typeof DRIFT_CHANGES)[number];

/** `now` of a `missing` change. */
export const ABSENT = "absent";

/**
 * How often `schema.drift` is raised per endpoint and event type (design §19): the first drifted
 * capture in an hour raises it, with the count of those since the last one.
 */
export const SCHEMA_DRIFT_ALERT_INTERVAL_S = 3600;

export const schemaField = z.object({
  path: z.string().describe("Dotted: `data.object.amount`; an array's elements are `items[]`; `*` stands for keys that look like data, not names."),
  types: z.array(z.enum(JSON_TYPES)).describe("Every JSON type seen at the path."),
  presentRatio: z.number().min(0).max(1).describe("Share of the samples in which the path was present."),
});
export type SchemaFieldJson = z.infer<typeof schemaField>;

export const schemaSummary = z
  .object({
    eventType: z.string().describe("The captures' canonicalEventType, or `*` for captures without one."),
    samples: z.int().describe("Captures learned from."),
    firstSeenAt: dateTime,
    lastSeenAt: dateTime,
    fields: z.array(schemaField).describe(`At most ${SCHEMA_LIMITS.pathsPerType}, in the order first seen.`),
  })
  .meta({ ...extension });
export type SchemaSummaryJson = z.infer<typeof schemaSummary>;

export const schemaList = z.object({ items: z.array(schemaSummary) }).meta({ ...extension });
export type SchemaListJson = z.infer<typeof schemaList>;

/** `GET /v1/endpoints/{endpointId}/schemas/{eventType}`: a JSON Schema (draft 2020-12) document. */
export const jsonSchemaDocument = z
  .object({
    $schema: z.literal("https://json-schema.org/draft/2020-12/schema"),
    title: z.string(),
    type: z.literal("object"),
  })
  .catchall(z.unknown())
  .meta({ ...extension });
export type JsonSchemaDocument = z.infer<typeof jsonSchemaDocument>;

export const schemaDriftChange = z.object({
  path: z.string(),
  change: z.enum(DRIFT_CHANGES),
  seen: z.array(z.enum(JSON_TYPES)).describe("The types learned at the path before this capture ([] for `added`)."),
  now: z.union([z.enum(JSON_TYPES), z.literal(ABSENT)]).describe("The type this capture brought, or `absent`."),
});
export type SchemaDriftChangeJson = z.infer<typeof schemaDriftChange>;

export const schemaDrift = z.array(schemaDriftChange).meta({
  ...extension,
  description:
    `How this capture's JSON body departs from what its endpoint learned of its event type (design §19), once ${SCHEMA_LIMITS.samplesBeforeDrift} ` +
    "samples were learned; absent when it does not (or was not judged).",
});

/** A path param `{eventType}` of the schema route: an event type as captures carry it, or `*`. */
export const eventTypeParam = z.string().min(1).max(200);
