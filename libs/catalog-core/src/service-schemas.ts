import type { ServiceImpl } from "@connectrpc/connect";
import type { CapturedEvent, CatalogService } from "@whc/contracts";
import { JSON_TYPES, SCHEMA_LIMITS } from "@whc/api-model";
import { notFound, validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import type { AppendResult, SchemaObservation } from "./types.js";
import { requireUuid } from "./ids.js";
import { schemaToProto } from "./convert.js";
import { schemaEventType } from "./schemas.js";

/** The longest shape ingest writes: every path kept at its longest, with all its type letters. */
const MAX_SHAPE_CHARS = 2 + SCHEMA_LIMITS.pathsPerType * (SCHEMA_LIMITS.pathLength + JSON_TYPES.length + 2);

/**
 * What an append hands the schema learner: each stored capture that brought a shape (ingest
 * writes none for bodies it does not learn). A shape longer than any ingest writes is not
 * learned; one that does not decode is skipped when learned (ADR 0090).
 */
export function observationsOf(captures: readonly CapturedEvent[], appended: readonly (AppendResult | undefined)[]): SchemaObservation[] {
  const out: SchemaObservation[] = [];
  for (let i = 0; i < captures.length; i += 1) {
    const c = captures[i]!;
    const stored = appended[i];
    if (!stored || c.bodyShape === "" || c.bodyShape.length > MAX_SHAPE_CHARS) continue;
    out.push({
      accountId: c.accountId,
      endpointId: c.endpointId,
      eventType: schemaEventType(c.canonicalEventType),
      eventId: stored.id,
      receivedAt: stored.receivedAt,
      shape: c.bodyShape,
    });
  }
  return out;
}

/** Schemas and drift (design §19): what was learned, per endpoint and event type. */
export function schemaMethods(store: CatalogStore): Pick<ServiceImpl<typeof CatalogService>, "listSchemas" | "getSchema"> {
  async function visibleEndpoint(accountId: string, endpointId: string): Promise<void> {
    if (!accountId) throw validationFailed("account_id", "required");
    requireUuid("endpoint_id", endpointId);
    if (!(await store.getEndpoint(endpointId, accountId))) throw notFound("endpoint");
  }

  return {
    async listSchemas(req) {
      await visibleEndpoint(req.accountId, req.endpointId);
      return { schemas: (await store.listSchemas(req.accountId, req.endpointId)).map(schemaToProto) };
    },

    async getSchema(req) {
      await visibleEndpoint(req.accountId, req.endpointId);
      if (!req.eventType || req.eventType.length > 200) throw validationFailed("event_type", req.eventType ? "length" : "required");
      const schema = await store.getSchema(req.accountId, req.endpointId, req.eventType);
      if (!schema) throw notFound("schema");
      return { schema: schemaToProto(schema) };
    },
  };
}
