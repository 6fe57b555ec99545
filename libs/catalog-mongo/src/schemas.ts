import { SCHEMA_LIMITS } from "@whc/api-model";
import { learnGroup, schemaKey, observationsBySchema, type CatalogStore, type SchemaDriftNotice, type SchemaObservation, type SchemaRecord } from "@whc/catalog-core";
import type { AnyBulkWriteOperation } from "mongodb";
import type { CatalogCollections } from "./connection.js";
import type { Doc } from "./documents.js";
import type { AnyDoc } from "./records.js";

export type SchemaMethods = Pick<CatalogStore, "learnSchemas" | "listSchemas" | "getSchema">;

/**
 * One document per endpoint and event type in `schemas`, `_id` schemaKey. `version` moves with
 * every write: a write is a replace of the version it read (or an insert of a new `_id`), so
 * two catalog processes learning the same schema at once never both count from one state;
 * the one that loses reads again and learns again (ADR 0090).
 */
export function schemaDoc(s: SchemaRecord, version: number): AnyDoc {
  return {
    _id: schemaKey(s.endpointId, s.eventType),
    accountId: s.accountId,
    endpointId: s.endpointId,
    eventType: s.eventType,
    samples: s.samples,
    firstSeenAt: s.firstSeenAt,
    lastSeenAt: s.lastSeenAt,
    paths: s.paths.map((p) => ({ p: p.path, m: p.mask, n: p.present })),
    ...(s.driftNoticeAt !== undefined ? { driftNoticeAt: s.driftNoticeAt } : {}),
    driftsSinceNotice: s.driftsSinceNotice,
    version,
  };
}

export function schemaOf(d: AnyDoc): SchemaRecord {
  return {
    accountId: d.accountId as string,
    endpointId: d.endpointId as string,
    eventType: d.eventType as string,
    samples: d.samples as number,
    firstSeenAt: d.firstSeenAt as number,
    lastSeenAt: d.lastSeenAt as number,
    paths: (d.paths as { p: string; m: number; n: number }[]).map((p) => ({ path: p.p, mask: p.m, present: p.n })),
    driftNoticeAt: typeof d.driftNoticeAt === "number" ? d.driftNoticeAt : undefined,
    driftsSinceNotice: (d.driftsSinceNotice as number | undefined) ?? 0,
  };
}

/** The replace of a schema learned from the version read: matches nothing once another write moved it. */
export function schemaReplaceFilter(endpointId: string, eventType: string, version: number): Doc {
  return { _id: schemaKey(endpointId, eventType), version };
}

/** An account's endpoint's schemas (another account's endpoint has none to show). */
export function endpointSchemasFilter(accountId: string, endpointId: string): Doc {
  return { endpointId, accountId };
}

/** Sets a drifted event's schemaDrift (the list filter `schemaDrift` is its presence). */
export function driftUpdate(eventId: string, endpointId: string, changes: unknown[]): { filter: Doc; update: Doc } {
  return { filter: { _id: eventId, endpointId }, update: { $set: { schemaDrift: changes } } };
}

/** Tries of one schema's learning when other catalog processes keep writing it. */
const MAX_TRIES = 8;

function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: unknown }).code === 11000;
}

export function createSchemas({ endpoints, events, schemas }: Pick<CatalogCollections, "endpoints" | "events" | "schemas">): SchemaMethods {
  /** Whether a new schema may be made: the endpoint is the account's and has room for another type. */
  async function mayCreate(accountId: string, endpointId: string): Promise<boolean> {
    if (!(await endpoints.findOne({ _id: endpointId, accountId }, { projection: { _id: 1 } }))) return false;
    return (await schemas.countDocuments({ endpointId }, { limit: SCHEMA_LIMITS.typesPerEndpoint })) < SCHEMA_LIMITS.typesPerEndpoint;
  }

  /** One schema's group, learned and written; undefined when skipped. Retried when another write came between. */
  async function learnOne(group: readonly SchemaObservation[], noticeIntervalMs: number) {
    const { accountId, endpointId, eventType } = group[0]!;
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const stored = await schemas.findOne({ _id: schemaKey(endpointId, eventType) });
      if (stored && stored.accountId !== accountId) return undefined;
      if (!stored && !(await mayCreate(accountId, endpointId))) return undefined;
      const learned = learnGroup(stored ? schemaOf(stored) : undefined, group, noticeIntervalMs);
      const version = stored ? (stored.version as number) : 0;
      try {
        if (stored) {
          const res = await schemas.replaceOne(schemaReplaceFilter(endpointId, eventType, version), schemaDoc(learned.schema, version + 1));
          if (res.matchedCount === 0) continue;
        } else {
          await schemas.insertOne(schemaDoc(learned.schema, 1));
        }
      } catch (err) {
        if (isDuplicateKey(err)) continue;
        throw err;
      }
      return learned;
    }
    // Others kept winning: these samples are left out, nothing else is lost.
    return undefined;
  }

  return {
    async learnSchemas(observations, noticeIntervalMs) {
      const notices: SchemaDriftNotice[] = [];
      const drifts: AnyBulkWriteOperation<AnyDoc>[] = [];
      for (const group of observationsBySchema(observations).values()) {
        const learned = await learnOne(group, noticeIntervalMs);
        if (!learned) continue;
        for (const d of learned.drifts) {
          const { filter, update } = driftUpdate(d.eventId, group[0]!.endpointId, d.changes);
          drifts.push({ updateOne: { filter, update } });
        }
        notices.push(...learned.notices);
      }
      if (drifts.length > 0) await events.bulkWrite(drifts, { ordered: false });
      return notices;
    },

    async listSchemas(accountId, endpointId) {
      const docs = await schemas.find(endpointSchemasFilter(accountId, endpointId)).sort({ eventType: 1 }).toArray();
      return docs.map(schemaOf);
    },

    async getSchema(accountId, endpointId, eventType) {
      const d = await schemas.findOne({ _id: schemaKey(endpointId, eventType), accountId });
      return d ? schemaOf(d) : undefined;
    },
  };
}
