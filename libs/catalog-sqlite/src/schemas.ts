import type Database from "better-sqlite3";
import { SCHEMA_LIMITS } from "@whc/api-model";
import { learnGroup, observationsBySchema, type CatalogStore, type SchemaDriftNotice, type SchemaObservation, type SchemaRecord } from "@whc/catalog-core";
import { createWriteLockWait } from "./write-lock.js";

export type SchemaMethods = Pick<CatalogStore, "learnSchemas" | "listSchemas" | "getSchema">;

interface SchemaRow {
  endpoint_id: string;
  event_type: string;
  account_id: string;
  samples: number;
  first_seen_at: number;
  last_seen_at: number;
  paths: string;
  drift_notice_at: number | null;
  drifts_since_notice: number;
}

const COLUMNS = "endpoint_id, event_type, account_id, samples, first_seen_at, last_seen_at, paths, drift_notice_at, drifts_since_notice";

function recordOf(r: SchemaRow): SchemaRecord {
  const paths = JSON.parse(r.paths) as [string, number, number][];
  return {
    accountId: r.account_id,
    endpointId: r.endpoint_id,
    eventType: r.event_type,
    samples: r.samples,
    firstSeenAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
    paths: paths.map(([path, mask, present]) => ({ path, mask, present })),
    driftNoticeAt: r.drift_notice_at ?? undefined,
    driftsSinceNotice: r.drifts_since_notice,
  };
}

function rowOf(s: SchemaRecord): SchemaRow {
  return {
    endpoint_id: s.endpointId,
    event_type: s.eventType,
    account_id: s.accountId,
    samples: s.samples,
    first_seen_at: s.firstSeenAt,
    last_seen_at: s.lastSeenAt,
    paths: JSON.stringify(s.paths.map((p) => [p.path, p.mask, p.present])),
    drift_notice_at: s.driftNoticeAt ?? null,
    drifts_since_notice: s.driftsSinceNotice,
  };
}

/**
 * `run` committed without waiting for the disk: synchronous=NORMAL for its transaction, the
 * connection's level again after it, also when it throws (FULL for the catalog). What learning
 * writes is a statistic (ADR 0090): in WAL mode such a commit is whole or absent after a crash,
 * never corrupt, it survives the process dying (its pages are the system's to write), and the
 * next append's commit syncs the log with it. An fsync of its own, twenty commits a second, cost
 * the all-in-one process 1-2 % of its CPU per capture (docs/performance.md, "Schema learning
 * priced side by side").
 */
export function withoutWaitingForTheDisk<T>(db: Database.Database, run: () => T): T {
  const level = db.pragma("synchronous", { simple: true }) as number;
  db.pragma("synchronous = NORMAL");
  try {
    return run();
  } finally {
    db.pragma(`synchronous = ${level}`);
  }
}

/**
 * Schemas and drift (design §19; ADR 0090) in `event_schemas`, one row per endpoint and event
 * type. A call learns all its observations in one IMMEDIATE transaction: each schema is read,
 * learned (catalog-core's learnGroup) and written under the write lock, so two catalog
 * processes on one file never learn from the same schema at once; drifted events get their
 * `schema_drift` in the same transaction.
 */
export function createSchemas(db: Database.Database): SchemaMethods {
  const stmt = {
    one: db.prepare(`SELECT ${COLUMNS} FROM event_schemas WHERE endpoint_id = ? AND event_type = ?`),
    oneOfAccount: db.prepare(`SELECT ${COLUMNS} FROM event_schemas WHERE endpoint_id = ? AND event_type = ? AND account_id = ?`),
    ofEndpoint: db.prepare(`SELECT ${COLUMNS} FROM event_schemas WHERE endpoint_id = ? AND account_id = ? ORDER BY event_type`),
    count: db.prepare("SELECT count(*) FROM event_schemas WHERE endpoint_id = ?").pluck(),
    endpointAccount: db.prepare("SELECT account_id FROM endpoints WHERE id = ?").pluck(),
    save: db.prepare(
      `INSERT INTO event_schemas (${COLUMNS}) VALUES (@endpoint_id, @event_type, @account_id, @samples, @first_seen_at, @last_seen_at,
        @paths, @drift_notice_at, @drifts_since_notice)
       ON CONFLICT (endpoint_id, event_type) DO UPDATE SET samples = excluded.samples, first_seen_at = excluded.first_seen_at,
        last_seen_at = excluded.last_seen_at, paths = excluded.paths, drift_notice_at = excluded.drift_notice_at,
        drifts_since_notice = excluded.drifts_since_notice`,
    ),
    drift: db.prepare("UPDATE events SET schema_drift = ? WHERE id = ? AND endpoint_id = ?"),
  };

  const learnTx = db.transaction((observations: readonly SchemaObservation[], noticeIntervalMs: number) => {
    const notices: SchemaDriftNotice[] = [];
    for (const group of observationsBySchema(observations).values()) {
      const { endpointId, eventType, accountId } = group[0]!;
      const row = stmt.one.get(endpointId, eventType) as SchemaRow | undefined;
      if (!row) {
        if (stmt.endpointAccount.get(endpointId) !== accountId) continue;
        if ((stmt.count.get(endpointId) as number) >= SCHEMA_LIMITS.typesPerEndpoint) continue;
      } else if (row.account_id !== accountId) {
        continue;
      }
      const learned = learnGroup(row && recordOf(row), group, noticeIntervalMs);
      stmt.save.run(rowOf(learned.schema));
      for (const d of learned.drifts) stmt.drift.run(JSON.stringify(d.changes), d.eventId, endpointId);
      notices.push(...learned.notices);
    }
    return notices;
  });

  const underWriteLock = createWriteLockWait(db);
  return {
    async learnSchemas(observations, noticeIntervalMs) {
      if (observations.length === 0) return [];
      return underWriteLock(() => withoutWaitingForTheDisk(db, () => learnTx.immediate(observations, noticeIntervalMs)));
    },

    async listSchemas(accountId, endpointId) {
      return (stmt.ofEndpoint.all(endpointId, accountId) as SchemaRow[]).map(recordOf);
    },

    async getSchema(accountId, endpointId, eventType) {
      const row = stmt.oneOfAccount.get(endpointId, eventType, accountId) as SchemaRow | undefined;
      return row && recordOf(row);
    },
  };
}
