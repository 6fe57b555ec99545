import { randomUUID } from "node:crypto";
import { AppError, notFound } from "@whc/errors";
import { ensuredApiKey, type ApiKeyFilter, type ApiKeyRecord, type CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { isDuplicate } from "./errors.js";
import { apiKeyDocs, bytes, type AnyDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "createApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "touchApiKey" | "countActiveApiKeys"
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

/** Accounts and their API keys; an account exists from its first key on. */
export function createApiKeys({ accounts, keys }: Pick<CatalogCollections, "accounts" | "keys">, withAudit: WithAudit): ApiKeyMethods {
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
    async createApiKey(key, audit) {
      const account = await accounts.findOne({ _id: key.accountId });
      if (!account) throw notFound("account");
      const doc = apiKeyDocs.write({ ...key, accountName: account.name as string });
      await withAudit(audit, (session) => keys.insertOne(doc, { session }));
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
  };
}
