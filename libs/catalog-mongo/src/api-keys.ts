import { randomUUID } from "node:crypto";
import { AppError } from "@whc/errors";
import type { ApiKeyRecord, CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { isDuplicate } from "./errors.js";
import { apiKeyDocs, bytes, type AnyDoc } from "./records.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "countActiveApiKeys"
>;

/** Accounts and their API keys; an account exists from its first key on. */
export function createApiKeys({ accounts, keys }: Pick<CatalogCollections, "accounts" | "keys">): ApiKeyMethods {
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

  async function ensureApiKey(accountName: string, keyHash: Uint8Array, prefix: string, now: number): Promise<{ key: ApiKeyRecord; created: boolean }> {
    const existing = await keys.findOne({ keyHash: bytes(keyHash) });
    if (existing) {
      if (existing.accountName !== accountName) throw new AppError("conflict", "key already belongs to another account");
      return { key: apiKeyDocs.read(existing), created: false };
    }
    const account = await accountNamed(accountName, now);
    const doc = apiKeyDocs.write({ id: randomUUID(), accountId: account._id, accountName, keyHash, prefix, createdAt: now, revokedAt: undefined });
    try {
      await keys.insertOne(doc);
      return { key: apiKeyDocs.read(doc), created: true };
    } catch (err) {
      // The same key, registered meanwhile: answer as for an existing key.
      if (!isDuplicate(err)) throw err;
      return ensureApiKey(accountName, keyHash, prefix, now);
    }
  }

  return {
    ensureApiKey,

    async findApiKeyByHash(keyHash) {
      const d = await keys.findOne({ keyHash: bytes(keyHash) });
      return d ? apiKeyDocs.read(d) : undefined;
    },

    async listApiKeys(accountName) {
      const docs = await keys
        .find(accountName ? { accountName } : {})
        .sort({ createdAt: 1, _id: 1 })
        .toArray();
      return docs.map((d) => apiKeyDocs.read(d));
    },

    async revokeApiKey(keyId, now) {
      await keys.updateOne({ _id: keyId, revokedAt: { $exists: false } }, { $set: { revokedAt: now } });
      const d = await keys.findOne({ _id: keyId });
      return d ? apiKeyDocs.read(d) : undefined;
    },

    async countActiveApiKeys() {
      return keys.countDocuments({ revokedAt: { $exists: false } });
    },
  };
}
