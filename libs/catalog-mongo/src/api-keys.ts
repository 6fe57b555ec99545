import { randomUUID } from "node:crypto";
import { AppError, notFound } from "@whc/errors";
import { ensuredApiKey, keyQuotaExceeded, type ApiKeyFilter, type ApiKeyRecord, type AuditRecord, type CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { isDuplicate } from "./errors.js";
import { apiKeyDocs, auditLogDocs, bytes, type AnyDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "createApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "touchApiKey" | "countActiveApiKeys" | "purgeApiKeys"
>;

type Doc = Record<string, unknown>;

/** The keys listApiKeys selects: one account's (by id or by name), or every key. */
export function apiKeyListFilter(filter: ApiKeyFilter): Doc {
  return {
    ...(filter.accountId ? { accountId: filter.accountId } : {}),
    ...(filter.accountName ? { accountName: filter.accountName } : {}),
  };
}

export const API_KEY_ORDER = { createdAt: 1, _id: 1 } as const;

/** The key revokeApiKey may revoke: not revoked yet, and of the account when one is named. */
export function revokeFilter(keyId: string, accountId?: string): Doc {
  return { _id: keyId, revokedAt: { $exists: false }, ...(accountId !== undefined ? { accountId } : {}) };
}

/** The key touchApiKey moves: one whose last use is unknown or at or before `notBefore` (ADR 0051). */
export function touchFilter(keyId: string, notBefore: number): Doc {
  return { _id: keyId, $or: [{ lastUsedAt: { $exists: false } }, { lastUsedAt: { $lte: notBefore } }] };
}

/**
 * The account's keys that are usable at `at`: not revoked, and without an expiry or expiring
 * after it (what WHC_QUOTA_KEYS counts, ADR 0054). `null` matches a missing field as well.
 */
export function usableKeysFilter(accountId: string, at: number): Doc {
  return { accountId, revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: at } }] };
}

/**
 * The keys purgeApiKeys deletes: revoked, or expired, before `before` (ADR 0054). A key with
 * neither field never matches: `$lt` on a number matches no missing or null field.
 */
export function purgeableKeysFilter(before: number): Doc {
  return { $or: [{ revokedAt: { $lt: before } }, { expiresAt: { $lt: before } }] };
}

/**
 * The write a create under the key quota makes first, in its transaction, as the endpoint
 * quota's guard does (ADR 0036): two creates of one account that overlap both write the
 * account's document, MongoDB fails one with a write conflict and runs it again, and its
 * count then sees the other's key.
 */
export function keyQuotaGuard(accountId: string): { filter: Doc; update: Doc } {
  return { filter: { _id: accountId }, update: { $inc: { keyCreates: 1 } } };
}

/** Keys deleted per round: a purge never holds much of the server at once. */
const PURGE_CHUNK = 2000;

/**
 * Accounts and their API keys; an account exists from its first key on. A create under the
 * quota counts and inserts in one transaction behind keyQuotaGuard; within one process such
 * creates also take turns, which is what keeps the quota on a standalone server (no
 * transactions: one catalog process, docs/operations.md).
 */
export function createApiKeys(
  { accounts, keys, auditLog }: Pick<CatalogCollections, "accounts" | "keys" | "auditLog">,
  inTransaction: InTransaction,
  withAudit: WithAudit,
): ApiKeyMethods {
  let createChain: Promise<unknown> = Promise.resolve();

  async function createUnderQuota(doc: AnyDoc, at: number, quota: number, audit: AuditRecord | undefined): Promise<void> {
    const accountId = doc.accountId as string;
    // The entry joins the quota's transaction (WithAudit's own opens none inside it).
    await inTransaction(async (session) => {
      const guard = keyQuotaGuard(accountId);
      await accounts.updateOne(guard.filter, guard.update, { session });
      const count = await keys.countDocuments(usableKeysFilter(accountId, at), { session, limit: quota });
      if (count >= quota) throw keyQuotaExceeded(quota);
      await keys.insertOne(doc, { session });
      if (audit) await auditLog.insertOne(auditLogDocs.write(audit), { session });
    });
  }

  /** The account of that name, created if there is none; a racing creator's wins. */
  async function accountNamed(name: string, now: number): Promise<AnyDoc> {
    let account: AnyDoc | null = null;
    for (let attempt = 0; attempt < 2 && !account; attempt += 1) {
      try {
        account = await accounts.findOneAndUpdate(
          { name },
          { $setOnInsert: { _id: randomUUID(), name, createdAt: now } },
          { upsert: true, returnDocument: "after" },
        );
      } catch (err) {
        if (!isDuplicate(err)) throw err;
      }
    }
    return account!;
  }

  async function ensureApiKey(accountName: string, keyHash: Uint8Array, prefix: string, now: number, name = ""): Promise<{ key: ApiKeyRecord; created: boolean }> {
    const existing = await keys.findOne({ keyHash: bytes(keyHash) });
    if (existing) {
      if (existing.accountName !== accountName) throw new AppError("conflict", "key already belongs to another account");
      return { key: apiKeyDocs.read(existing), created: false };
    }
    const account = await accountNamed(accountName, now);
    const doc = apiKeyDocs.write(ensuredApiKey({ id: randomUUID(), accountId: account._id, accountName, name, prefix, keyHash, createdAt: now }));
    try {
      await keys.insertOne(doc);
      return { key: apiKeyDocs.read(doc), created: true };
    } catch (err) {
      // The same key, registered meanwhile: answer as for an existing key.
      if (!isDuplicate(err)) throw err;
      return ensureApiKey(accountName, keyHash, prefix, now, name);
    }
  }

  return {
    ensureApiKey,

    // A registered hash fails the unique keyHash index: errors.ts names it a conflict.
    async createApiKey(key, audit, quota) {
      const account = await accounts.findOne({ _id: key.accountId });
      if (!account) throw notFound("account");
      const doc = apiKeyDocs.write({ ...key, accountName: account.name as string });
      if (quota === undefined) {
        await withAudit(audit, (session) => keys.insertOne(doc, { session }));
      } else {
        const run = createChain.then(() => createUnderQuota(doc, key.createdAt, quota, audit));
        createChain = run.catch(() => undefined);
        await run;
      }
      return apiKeyDocs.read(doc);
    },

    async findApiKeyByHash(keyHash) {
      const d = await keys.findOne({ keyHash: bytes(keyHash) });
      return d ? apiKeyDocs.read(d) : undefined;
    },

    async listApiKeys(filter = {}) {
      const docs = await keys.find(apiKeyListFilter(filter)).sort(API_KEY_ORDER).toArray();
      return docs.map((d) => apiKeyDocs.read(d));
    },

    async revokeApiKey(keyId, now, accountId, audit) {
      // Only the call that revokes it writes key.revoked.
      await withAudit(
        audit,
        (session) => keys.updateOne(revokeFilter(keyId, accountId), { $set: { revokedAt: now } }, { session }),
        (res) => res.modifiedCount > 0,
      );
      const d = await keys.findOne({ _id: keyId, ...(accountId !== undefined ? { accountId } : {}) });
      return d ? apiKeyDocs.read(d) : undefined;
    },

    async touchApiKey(keyId, at, notBefore) {
      await keys.updateOne(touchFilter(keyId, notBefore), { $set: { lastUsedAt: at } });
    },

    async countActiveApiKeys() {
      return keys.countDocuments({ revokedAt: { $exists: false } });
    },

    async purgeApiKeys(before) {
      let total = 0;
      for (;;) {
        const batch = await keys.find(purgeableKeysFilter(before), { projection: { _id: 1 } }).limit(PURGE_CHUNK).toArray();
        if (batch.length === 0) return total;
        total += (await keys.deleteMany({ _id: { $in: batch.map((d) => d._id) } })).deletedCount;
        if (batch.length < PURGE_CHUNK) return total;
      }
    },
  };
}
