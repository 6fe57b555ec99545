import type Database from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "@whc/catalog-core";
import { apiKeyRows, asBuffer, type Row } from "./rows.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "countActiveApiKeys"
>;

const SELECT_KEYS = "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id";

/** Accounts and their API keys; an account exists from its first key on. */
export function createApiKeys(db: Database.Database): ApiKeyMethods {
  const stmt = {
    accountByName: db.prepare("SELECT id FROM accounts WHERE name = ?"),
    insertAccount: db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)"),
    keyByHash: db.prepare(`${SELECT_KEYS} WHERE k.key_hash = ?`),
    keyById: db.prepare(`${SELECT_KEYS} WHERE k.id = ?`),
    insertKey: db.prepare(apiKeyRows.insertSql()),
    listKeys: db.prepare(`${SELECT_KEYS} ORDER BY k.created_at, k.id`),
    listKeysOf: db.prepare(`${SELECT_KEYS} WHERE a.name = ? ORDER BY k.created_at, k.id`),
    revokeKey: db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
    countKeys: db.prepare("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL"),
  };

  const keyById = (id: string) => {
    const row = stmt.keyById.get(id) as Row | undefined;
    return row ? apiKeyRows.read(row) : undefined;
  };

  const ensureApiKeyTx = db.transaction((accountName: string, keyHash: Uint8Array, prefix: string, now: number) => {
    const existing = stmt.keyByHash.get(asBuffer(keyHash)) as Row | undefined;
    if (existing) {
      if (existing.account_name !== accountName) {
        throw new AppError("conflict", "key already belongs to another account");
      }
      return { key: apiKeyRows.read(existing), created: false };
    }
    let account = stmt.accountByName.get(accountName) as { id: string } | undefined;
    if (!account) {
      account = { id: randomUUID() };
      stmt.insertAccount.run(account.id, accountName, now);
    }
    const id = randomUUID();
    stmt.insertKey.run(
      apiKeyRows.values({ id, accountId: account.id, accountName, prefix, keyHash, createdAt: now, revokedAt: undefined }),
    );
    return { key: keyById(id)!, created: true };
  });

  return {
    async ensureApiKey(accountName, keyHash, prefix, now) {
      return ensureApiKeyTx.immediate(accountName, keyHash, prefix, now);
    },

    async findApiKeyByHash(keyHash) {
      const row = stmt.keyByHash.get(asBuffer(keyHash)) as Row | undefined;
      return row ? apiKeyRows.read(row) : undefined;
    },

    async listApiKeys(accountName) {
      const rows = (accountName ? stmt.listKeysOf.all(accountName) : stmt.listKeys.all()) as Row[];
      return rows.map((row) => apiKeyRows.read(row));
    },

    async revokeApiKey(keyId, now) {
      if (!keyById(keyId)) return undefined;
      stmt.revokeKey.run(now, keyId);
      return keyById(keyId);
    },

    async countActiveApiKeys() {
      return (stmt.countKeys.get() as { n: number }).n;
    },
  };
}
