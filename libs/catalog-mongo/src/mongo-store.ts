import { randomUUID } from "node:crypto";
import {
  Binary,
  MongoClient,
  MongoError,
  MongoServerError,
  type ClientSession,
  type Collection,
  type Db,
  type WriteConcernSettings,
} from "mongodb";
import { AppError } from "@whc/errors";
import type {
  ApiKeyRecord,
  CatalogStore,
  EndpointRecord,
  EventRecord,
  EventSummaryRecord,
  HeaderPair,
  ReplayAuditRecord,
  Stamp,
} from "@whc/catalog-core";
import {
  NEWEST_FIRST,
  OLDEST_FIRST,
  SUMMARY_PROJECTION,
  appendCounterUpdate,
  chargeFilter,
  chargeUpdate,
  counterId,
  excludedFilter,
  markReadFilter,
  olderThan,
  pageFilter,
  removedCounterUpdate,
  type Doc,
} from "./documents.js";

export interface MongoStoreOptions {
  uri: string;
  /** Default: the database named in the URI, else "webhook_capture". */
  dbName?: string;
  /** "majority" (default) or a number of members. */
  writeConcern?: string;
  appName?: string;
  serverSelectionTimeoutMS?: number;
}

type AnyDoc = { _id: string } & Record<string, any>;

const bytes = (value: Uint8Array) => new Binary(Buffer.from(value));
const plain = (value: Binary | undefined | null) => (value ? new Uint8Array(value.buffer) : undefined);

function translate(err: unknown): never {
  if (AppError.is(err)) throw err;
  if (err instanceof MongoError) {
    const transient =
      err.name === "MongoServerSelectionError" ||
      err.name === "MongoNetworkError" ||
      err.name === "MongoNetworkTimeoutError" ||
      err.name === "MongoNotConnectedError" ||
      err.name === "MongoTopologyClosedError" ||
      err.hasErrorLabel("TransientTransactionError") ||
      err.hasErrorLabel("RetryableWriteError");
    if (transient) throw new AppError("service_unavailable", `mongodb: ${err.name}`, { cause: err });
  }
  throw err;
}

function isDuplicate(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

function endpointFromDoc(d: AnyDoc): EndpointRecord {
  return {
    id: d._id,
    accountId: d.accountId,
    slug: d.slug,
    displayName: d.displayName,
    operatingMode: d.operatingMode,
    status: d.status,
    replayFromDashboard: d.replayFromDashboard,
    replayFromApi: d.replayFromApi,
    provider: d.provider,
    sealedSecret: plain(d.sealedSecret),
    genericSignatureHeader: d.genericSignatureHeader,
    genericSignaturePrefix: d.genericSignaturePrefix,
    source: d.source,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    eventCount: d.eventCount,
    lastEventAt: d.lastEventAt ?? undefined,
    lastPurgedAt: d.lastPurgedAt ?? undefined,
    purgedEventCount: d.purgedEventCount,
  };
}

function keyFromDoc(d: AnyDoc): ApiKeyRecord {
  return {
    id: d._id,
    accountId: d.accountId,
    accountName: d.accountName,
    prefix: d.prefix,
    keyHash: plain(d.keyHash) as Uint8Array,
    createdAt: d.createdAt,
    revokedAt: d.revokedAt ?? undefined,
  };
}

function summaryFromDoc(d: AnyDoc): EventSummaryRecord {
  return {
    id: d._id,
    accountId: d.accountId,
    endpointId: d.endpointId,
    receivedAt: d.receivedAt,
    method: d.method,
    path: d.path,
    remoteIp: d.remoteIp,
    canonicalEventType: d.canonicalEventType,
    provider: d.provider,
    verification: d.verification,
    verificationFailureReason: d.verificationFailureReason,
    responseCode: d.responseCode,
    readAt: d.readAt ?? undefined,
    truncated: d.truncated,
    originalSizeBytes: d.originalSizeBytes,
    bodyStored: d.bodyStored,
    keyId: d.keyId ?? undefined,
  };
}

function uniqueTokens(tokens: readonly Uint8Array[]): Binary[] {
  const seen = new Map<string, Binary>();
  for (const t of tokens) seen.set(Buffer.from(t).toString("hex"), bytes(t));
  return [...seen.values()];
}

/**
 * The catalog on MongoDB. Appends are serialized within the store (the catalog is one
 * process), stamped inside that serialization, and run in a transaction on replica sets and
 * sharded clusters; a standalone server gets an ordered insert plus the counter update.
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<CatalogStore> {
  const w = !options.writeConcern || options.writeConcern === "majority" ? "majority" : Number(options.writeConcern);
  const writeConcern: WriteConcernSettings = { w, journal: true };
  const client = new MongoClient(options.uri, {
    appName: options.appName ?? "webhook-capture-catalog",
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5000,
    writeConcern,
    retryWrites: true,
  });
  let db: Db;
  let transactions = false;
  try {
    await client.connect();
    db = client.db(options.dbName);
    const hello = (await db.admin().command({ hello: 1 })) as AnyDoc;
    transactions = Boolean(hello.setName) || hello.msg === "isdbgrid";
  } catch (err) {
    await client.close().catch(() => undefined);
    return translate(err);
  }

  const accounts: Collection<AnyDoc> = db.collection("accounts");
  const keys: Collection<AnyDoc> = db.collection("api_keys");
  const endpoints: Collection<AnyDoc> = db.collection("endpoints");
  const events: Collection<AnyDoc> = db.collection("events");
  const counters: Collection<AnyDoc> = db.collection("replay_counters");
  const audits: Collection<AnyDoc> = db.collection("replay_audit");

  await Promise.all([
    accounts.createIndexes([{ key: { name: 1 }, unique: true }]),
    keys.createIndexes([{ key: { keyHash: 1 }, unique: true }, { key: { accountName: 1, createdAt: 1 } }]),
    endpoints.createIndexes([{ key: { accountId: 1, slug: 1 }, unique: true }, { key: { accountId: 1, createdAt: 1 } }]),
    events.createIndexes([
      { key: { endpointId: 1, receivedAt: -1, _id: -1 }, name: "page" },
      { key: { endpointId: 1, tokens: 1, receivedAt: -1, _id: -1 }, name: "search" },
      { key: { endpointId: 1, receivedAt: 1 }, name: "metadata_only", partialFilterExpression: { bodyStored: false } },
      { key: { receivedAt: 1 }, name: "retention" },
    ]),
    audits.createIndexes([{ key: { accountId: 1, createdAt: 1 } }]),
  ]).catch(translate);

  // One append at a time: stamps are taken in commit order.
  let appendChain: Promise<unknown> = Promise.resolve();

  async function inTransaction<T>(work: (session?: ClientSession) => Promise<T>): Promise<T> {
    if (!transactions) return work();
    const session = client.startSession();
    try {
      let result: T | undefined;
      await session.withTransaction(async () => {
        result = await work(session);
      }, { writeConcern });
      return result as T;
    } finally {
      await session.endSession();
    }
  }

  const store: CatalogStore = {
    kind: "mongodb",

    async ensureApiKey(accountName, keyHash, prefix, now) {
      try {
        const existing = await keys.findOne({ keyHash: bytes(keyHash) });
        if (existing) {
          if (existing.accountName !== accountName) throw new AppError("conflict", "key already belongs to another account");
          return { key: keyFromDoc(existing), created: false };
        }
        let account: AnyDoc | null = null;
        for (let attempt = 0; attempt < 2 && !account; attempt += 1) {
          try {
            account = await accounts.findOneAndUpdate(
              { name: accountName },
              { $setOnInsert: { _id: randomUUID(), name: accountName, createdAt: now } },
              { upsert: true, returnDocument: "after" },
            );
          } catch (err) {
            if (!isDuplicate(err)) throw err;
          }
        }
        const doc = { _id: randomUUID(), accountId: account!._id, accountName, keyHash: bytes(keyHash), prefix, createdAt: now };
        try {
          await keys.insertOne(doc);
          return { key: keyFromDoc(doc), created: true };
        } catch (err) {
          if (!isDuplicate(err)) throw err;
          return store.ensureApiKey(accountName, keyHash, prefix, now);
        }
      } catch (err) {
        return translate(err);
      }
    },

    async findApiKeyByHash(keyHash) {
      const d = await keys.findOne({ keyHash: bytes(keyHash) }).catch(translate);
      return d ? keyFromDoc(d) : undefined;
    },

    async listApiKeys(accountName) {
      const docs = await keys
        .find(accountName ? { accountName } : {})
        .sort({ createdAt: 1, _id: 1 })
        .toArray()
        .catch(translate);
      return docs.map(keyFromDoc);
    },

    async revokeApiKey(keyId, now) {
      try {
        await keys.updateOne({ _id: keyId, revokedAt: { $exists: false } }, { $set: { revokedAt: now } });
        const d = await keys.findOne({ _id: keyId });
        return d ? keyFromDoc(d) : undefined;
      } catch (err) {
        return translate(err);
      }
    },

    async countActiveApiKeys() {
      return keys.countDocuments({ revokedAt: { $exists: false } }).catch(translate);
    },

    async createEndpoint(e) {
      const doc: AnyDoc = {
        _id: e.id,
        accountId: e.accountId,
        slug: e.slug,
        displayName: e.displayName,
        operatingMode: e.operatingMode,
        status: e.status,
        replayFromDashboard: e.replayFromDashboard,
        replayFromApi: e.replayFromApi,
        provider: e.provider,
        ...(e.sealedSecret && e.sealedSecret.length ? { sealedSecret: bytes(e.sealedSecret) } : {}),
        genericSignatureHeader: e.genericSignatureHeader,
        genericSignaturePrefix: e.genericSignaturePrefix,
        source: e.source,
        createdAt: e.createdAt,
        updatedAt: e.updatedAt,
        eventCount: 0,
        purgedEventCount: 0,
      };
      try {
        await endpoints.insertOne(doc);
      } catch (err) {
        if (isDuplicate(err)) throw new AppError("slug_taken", "slug taken", { field: "slug" });
        return translate(err);
      }
      return endpointFromDoc(doc);
    },

    async getEndpoint(endpointId, accountId) {
      const d = await endpoints.findOne(accountId === undefined ? { _id: endpointId } : { _id: endpointId, accountId }).catch(translate);
      return d ? endpointFromDoc(d) : undefined;
    },

    async listEndpoints(accountId) {
      const docs = await endpoints.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray().catch(translate);
      return docs.map(endpointFromDoc);
    },

    async deleteEndpoint(accountId, endpointId) {
      try {
        return await inTransaction(async (session) => {
          const res = await endpoints.deleteOne({ _id: endpointId, accountId }, { session });
          if (res.deletedCount === 0) return false;
          await events.deleteMany({ endpointId }, { session });
          return true;
        });
      } catch (err) {
        return translate(err);
      }
    },

    appendEvents(newEvents, stamp) {
      const run = appendChain.then(async () => {
        const stamps: Stamp[] = newEvents.map(() => stamp());
        const ids = [...new Set(newEvents.map((e) => e.endpointId))];
        let live = new Set<string>();
        try {
          await inTransaction(async (session) => {
            live = new Set(
              (await endpoints.find({ _id: { $in: ids } }, { projection: { _id: 1 }, session }).toArray()).map((d) => d._id as string),
            );
            const docs: AnyDoc[] = [];
            const touched = new Map<string, { count: number; last: number }>();
            newEvents.forEach((e, i) => {
              if (!live.has(e.endpointId)) return;
              const s = stamps[i] as Stamp;
              docs.push({
                _id: s.id,
                endpointId: e.endpointId,
                accountId: e.accountId,
                receivedAt: s.receivedAt,
                method: e.method,
                path: e.path,
                headers: e.headers.map(([n, v]) => [n, v]),
                remoteIp: e.remoteIp,
                canonicalEventType: e.canonicalEventType,
                provider: e.provider,
                verification: e.verification,
                verificationFailureReason: e.verificationFailureReason,
                responseCode: e.responseCode,
                truncated: e.truncated,
                originalSizeBytes: e.originalSizeBytes,
                bodyStored: e.body !== undefined,
                ...(e.body
                  ? {
                      body: { ciphertext: bytes(e.body.ciphertext), wrappedKey: bytes(e.body.wrappedKey) },
                      keyId: e.body.keyId,
                      tokens: uniqueTokens(e.searchTokens),
                    }
                  : {}),
                diagnosticJson: e.diagnosticJson,
                forwardedResponseJson: e.forwardedResponseJson,
              });
              const t = touched.get(e.endpointId) ?? { count: 0, last: 0 };
              t.count += 1;
              t.last = Math.max(t.last, s.receivedAt);
              touched.set(e.endpointId, t);
            });
            if (docs.length) await events.insertMany(docs, { ordered: true, session });
            for (const [endpointId, t] of touched) {
              await endpoints.updateOne({ _id: endpointId }, appendCounterUpdate(t.count, t.last), { session });
            }
          });
        } catch (err) {
          return translate(err);
        }
        return newEvents.map((e, i) => (live.has(e.endpointId) ? stamps[i] : undefined));
      });
      appendChain = run.catch(() => undefined);
      return run;
    },

    async listEvents(q) {
      try {
        const tokens = q.searchTokens ? uniqueTokens(q.searchTokens) : undefined;
        if (tokens && tokens.length === 0) return { events: [], hasOlder: false, searchExcludedMetadataOnlyCount: 0 };
        let docs: AnyDoc[];
        let hasOlder: boolean;
        if (q.after) {
          docs = (
            await events.find(pageFilter(q, tokens), { projection: SUMMARY_PROJECTION }).sort(OLDEST_FIRST).limit(q.limit).toArray()
          ).reverse();
          const oldest = docs[docs.length - 1];
          hasOlder = oldest
            ? (await events.findOne(pageFilter({ ...q, after: undefined, before: undefined }, tokens, olderThan({ receivedAt: oldest.receivedAt, id: oldest._id })), {
                projection: { _id: 1 },
              })) !== null
            : false;
        } else {
          docs = await events
            .find(pageFilter(q, tokens), { projection: SUMMARY_PROJECTION })
            .sort(NEWEST_FIRST)
            .limit(q.limit + 1)
            .toArray();
          hasOlder = docs.length > q.limit;
          docs = docs.slice(0, q.limit);
        }
        const excluded = tokens ? await events.countDocuments(excludedFilter(q)) : 0;
        return { events: docs.map(summaryFromDoc), hasOlder, searchExcludedMetadataOnlyCount: excluded };
      } catch (err) {
        return translate(err);
      }
    },

    async getEvent(accountId, endpointId, eventId, markReadAt) {
      try {
        if (markReadAt !== undefined) await events.updateOne(markReadFilter(accountId, endpointId, eventId), { $set: { readAt: markReadAt } });
        const d = await events.findOne({ _id: eventId, endpointId, accountId }, { projection: { tokens: 0 } });
        if (!d) return undefined;
        const { bodyStored: _b, keyId: _k, ...summary } = summaryFromDoc(d);
        const record: EventRecord = {
          ...summary,
          headers: (d.headers as [string, string][]).map(([n, v]) => [n, v] as HeaderPair),
          body: d.body ? { ciphertext: plain(d.body.ciphertext)!, wrappedKey: plain(d.body.wrappedKey)!, keyId: d.keyId } : undefined,
          diagnosticJson: d.diagnosticJson,
          forwardedResponseJson: d.forwardedResponseJson,
        };
        return record;
      } catch (err) {
        return translate(err);
      }
    },

    async deleteEvent(accountId, endpointId, eventId) {
      try {
        return await inTransaction(async (session) => {
          const res = await events.deleteOne({ _id: eventId, endpointId, accountId }, { session });
          if (res.deletedCount === 0) return false;
          await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(1), { session });
          return true;
        });
      } catch (err) {
        return translate(err);
      }
    },

    async chargeReplay(accountId, day, limit) {
      if (limit <= 0) return { allowed: false, used: await store.getReplayUsage(accountId, day) };
      try {
        const d = await counters.findOneAndUpdate(chargeFilter(accountId, day, limit), chargeUpdate(accountId, day), {
          upsert: true,
          returnDocument: "after",
        });
        return { allowed: true, used: (d as AnyDoc).used as number };
      } catch (err) {
        // The counter exists but did not match: it is at the limit.
        if (isDuplicate(err)) return { allowed: false, used: await store.getReplayUsage(accountId, day) };
        return translate(err);
      }
    },

    async getReplayUsage(accountId, day) {
      const d = await counters.findOne({ _id: counterId(accountId, day) }).catch(translate);
      return (d?.used as number | undefined) ?? 0;
    },

    async recordReplayAudit(audit: ReplayAuditRecord) {
      const { id, ...rest } = audit;
      await audits.insertOne({ _id: id, ...rest }).catch(translate);
    },

    async purgeEvents(before, now) {
      let total = 0;
      try {
        for (;;) {
          const batch = await events
            .find({ receivedAt: { $lt: before } }, { projection: { _id: 1, endpointId: 1 } })
            .sort({ receivedAt: 1 })
            .limit(2000)
            .toArray();
          if (batch.length === 0) return total;
          const res = await events.deleteMany({ _id: { $in: batch.map((d) => d._id) } });
          total += res.deletedCount;
          const perEndpoint = new Map<string, number>();
          for (const d of batch) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
          for (const [endpointId, n] of perEndpoint) await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(n, now));
          if (batch.length < 2000) return total;
        }
      } catch (err) {
        return translate(err);
      }
    },

    async latestReceivedAt() {
      const d = await events.find({}, { projection: { receivedAt: 1 } }).sort({ receivedAt: -1 }).limit(1).next().catch(translate);
      return (d?.receivedAt as number | undefined) ?? 0;
    },

    async ping() {
      try {
        await db.command({ ping: 1 });
        return true;
      } catch {
        return false;
      }
    },

    async close() {
      await client.close();
    },
  };
  return store;
}

export type { Doc };
