import { MongoClient, type ClientSession, type Collection, type Db, type WriteConcernSettings } from "mongodb";
import { LEGACY_FILTER, LEGACY_MOVE, LEGACY_OUTBOX_INDEX, OUTBOX_INDEX } from "./delivery-documents.js";
import { ALERT_OUTBOX_INDEX } from "./alert-documents.js";
import { HELD_INDEX, type BreakerDoc } from "./control-documents.js";
import type { AnyDoc } from "./records.js";

export interface CatalogCollections {
  accounts: Collection<AnyDoc>;
  keys: Collection<AnyDoc>;
  endpoints: Collection<AnyDoc>;
  events: Collection<AnyDoc>;
  counters: Collection<AnyDoc>;
  audits: Collection<AnyDoc>;
  /** The audit log of design §15 (`audits` is the replay service's own record of replays). */
  auditLog: Collection<AnyDoc>;
  listeners: Collection<AnyDoc>;
  /** Alert channels (design §18) and the alert outbox (ADR 0085). */
  alertChannels: Collection<AnyDoc>;
  alerts: Collection<AnyDoc>;
  /** What was learned of endpoints' JSON bodies per event type (design §19). */
  schemas: Collection<AnyDoc>;
  /** Endpoints' deduplication keys (design §17, ADR 0083). */
  dedupeKeys: Collection<AnyDoc>;
  /** Bulk redelivery jobs (design §18; ADR 0089). */
  redeliveryJobs: Collection<AnyDoc>;
  /** Destinations' breakers and rate limit turns (design §18, ADR 0088). */
  breakers: Collection<BreakerDoc>;
  /** What the catalog notes of its own documents: which moves of stored documents were made. */
  meta: Collection<AnyDoc>;
}

export interface CatalogConnection {
  client: MongoClient;
  db: Db;
  collections: CatalogCollections;
  writeConcern: WriteConcernSettings;
  /** Replica sets and sharded clusters run transactions; a standalone server does not. */
  transactions: boolean;
}

export interface ConnectOptions {
  uri: string;
  dbName?: string | undefined;
  writeConcern?: string | undefined;
  appName?: string | undefined;
  serverSelectionTimeoutMS?: number | undefined;
}

/**
 * Connects, learns whether the server runs transactions and ensures the catalog's indexes;
 * closes the client again when any of that fails.
 */
export async function connectCatalog(options: ConnectOptions): Promise<CatalogConnection> {
  const w = !options.writeConcern || options.writeConcern === "majority" ? "majority" : Number(options.writeConcern);
  const writeConcern: WriteConcernSettings = { w, journal: true };
  const client = new MongoClient(options.uri, {
    appName: options.appName ?? "webhook-capture-catalog",
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5000,
    writeConcern,
    retryWrites: true,
  });
  try {
    await client.connect();
    const db = client.db(options.dbName);
    const hello = (await db.admin().command({ hello: 1 })) as AnyDoc;
    const transactions = Boolean(hello.setName) || hello.msg === "isdbgrid";
    const collections: CatalogCollections = {
      accounts: db.collection("accounts"),
      keys: db.collection("api_keys"),
      endpoints: db.collection("endpoints"),
      events: db.collection("events"),
      counters: db.collection("replay_counters"),
      audits: db.collection("replay_audit"),
      auditLog: db.collection("audit_log"),
      listeners: db.collection("listeners"),
      alertChannels: db.collection("alert_channels"),
      alerts: db.collection("alerts"),
      schemas: db.collection("schemas"),
      dedupeKeys: db.collection("dedupe_keys"),
      redeliveryJobs: db.collection("redelivery_jobs"),
      breakers: db.collection<BreakerDoc>("destination_breakers"),
      meta: db.collection("catalog_meta"),
    };
    await ensureIndexes(collections);
    await moveLegacyDeliveries(collections);
    return { client, db, collections, writeConcern, transactions };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

async function ensureIndexes(c: CatalogCollections): Promise<void> {
  await Promise.all([
    c.accounts.createIndexes([{ key: { name: 1 }, unique: true }]),
    c.keys.createIndexes([
      { key: { keyHash: 1 }, unique: true },
      { key: { accountName: 1, createdAt: 1 } },
      { key: { accountId: 1, createdAt: 1 } },
      // The key retention's two halves (purgeableKeysFilter): sparse, only keys with a revocation or an expiry.
      { key: { revokedAt: 1 }, sparse: true },
      { key: { expiresAt: 1 }, sparse: true },
    ]),
    c.endpoints.createIndexes([
      { key: { accountId: 1, slug: 1 }, unique: true },
      { key: { accountId: 1, createdAt: 1 } },
      // Pages of an account's endpoints by id, and the count of the endpoint quota (ADR 0036).
      { key: { accountId: 1, _id: 1 }, name: "account_page" },
    ]),
    c.events.createIndexes([
      { key: { endpointId: 1, receivedAt: -1, _id: -1 }, name: "page" },
      { key: { endpointId: 1, tokens: 1, receivedAt: -1, _id: -1 }, name: "search" },
      { key: { endpointId: 1, receivedAt: 1 }, name: "metadata_only", partialFilterExpression: { bodyStored: false } },
      { key: { receivedAt: 1 }, name: "retention" },
      OUTBOX_INDEX,
      // The deliveries a bulk redelivery job put back (ADR 0089): a page's count and a walked job's open ones.
      { key: { "deliveries.bulkJobId": 1 }, name: "bulk_deliveries", sparse: true },
      HELD_INDEX,
    ]),
    c.audits.createIndexes([{ key: { accountId: 1, createdAt: 1 } }]),
    c.auditLog.createIndexes([
      { key: { accountId: 1, at: -1, _id: -1 }, name: "page" },
      { key: { accountId: 1, endpointId: 1, at: -1, _id: -1 }, name: "endpoint_page" },
      { key: { at: 1 }, name: "retention" },
    ]),
    // The live list of an endpoint, and every save's removal of expired listeners.
    c.listeners.createIndexes([{ key: { endpointId: 1, startedAt: 1 } }, { key: { expiresAt: 1 } }]),
    // Names are unique per account; lists go oldest first.
    c.alertChannels.createIndexes([{ key: { accountId: 1, name: 1 }, unique: true }, { key: { accountId: 1, createdAt: 1, _id: 1 } }]),
    // A key's newest alert, the due ones, and the finished ones the purge removes.
    c.alerts.createIndexes([
      { key: { channelId: 1, type: 1, endpointId: 1, dueAt: -1, _id: -1 }, name: "key" },
      ALERT_OUTBOX_INDEX,
      { key: { dueAt: 1 }, name: "window" },
    ]),
    // An endpoint's schemas by event type (the list, the count of the types limit, the delete).
    c.schemas.createIndexes([{ key: { endpointId: 1, eventType: 1 } }]),
    // An endpoint's keys (its delete, the count) and the expired ones the purge removes.
    c.dedupeKeys.createIndexes([{ key: { endpointId: 1 } }, { key: { expiresAt: 1 }, name: "expiry" }]),
    // An endpoint's jobs newest first; the running ones for claims and an account's running count; the purge.
    c.redeliveryJobs.createIndexes([
      { key: { endpointId: 1, createdAt: -1, _id: -1 }, name: "endpoint_jobs" },
      { key: { state: 1, leaseUntil: 1, createdAt: 1, _id: 1 }, name: "claim" },
      { key: { accountId: 1, state: 1 }, name: "account_running" },
      { key: { finishedAt: 1 }, name: "finished", sparse: true },
    ]),
    // An endpoint's breakers; the probes due; the ones a claim releases and the metrics show.
    c.breakers.createIndexes([
      { key: { endpointId: 1 } },
      { key: { nextProbeAt: 1 }, partialFilterExpression: { nextProbeAt: { $type: "number" } } },
      { key: { holding: 1, state: 1 } },
    ]),
  ]);
}

/** The note that the events' deliveries moved to one per destination (design §17). */
const DELIVERIES_MOVED = "deliveries_per_destination";

/**
 * Moves the events stored before deliveries per destination (LEGACY_MOVE, once: a note in
 * catalog_meta says it was done, so a start does not scan every event again) and drops their
 * outbox index. Catalogs starting together may both run it; each document moves once (its
 * filter no longer matches it). Catalogs of an earlier version must not append meanwhile
 * (docs/operations.md, "Upgrading to destinations").
 */
async function moveLegacyDeliveries(c: CatalogCollections): Promise<void> {
  if (await c.meta.findOne({ _id: DELIVERIES_MOVED })) return;
  await c.events.updateMany(LEGACY_FILTER, LEGACY_MOVE);
  await c.events.dropIndex(LEGACY_OUTBOX_INDEX).catch(() => undefined);
  await c.meta.updateOne({ _id: DELIVERIES_MOVED }, { $set: { at: Date.now() } }, { upsert: true });
}

/** Runs `work` in a transaction where the server has them, else directly (no session). */
export type InTransaction = <T>(work: (session?: ClientSession) => Promise<T>) => Promise<T>;

export function createInTransaction(connection: CatalogConnection): InTransaction {
  const { client, transactions, writeConcern } = connection;
  return async function inTransaction<T>(work: (session?: ClientSession) => Promise<T>): Promise<T> {
    if (!transactions) return work();
    const session = client.startSession();
    try {
      let result: T | undefined;
      await session.withTransaction(
        async () => {
          result = await work(session);
        },
        { writeConcern },
      );
      return result as T;
    } finally {
      await session.endSession();
    }
  };
}
