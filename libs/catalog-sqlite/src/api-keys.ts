import type Database from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { AppError, notFound } from "@whc/errors";
import { ensuredApiKey, type ApiKeyRecord, type AuditRecord, type CatalogStore } from "@whc/catalog-core";
import { apiKeyRows, asBuffer, type Row } from "./rows.js";
import type { WriteAudit } from "./audit.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "createApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "touchApiKey" | "countActiveApiKeys"
>;

const SELECT_KEYS = "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id";

/** Accounts and their API keys; an account exists from its first key on. */
export function createApiKeys(db: Database.Database, writeAudit: WriteAudit): ApiKeyMethods {
  const stmt = {
    accountByName: db.prepare("SELECT id FROM accounts WHERE name = ?"),
    accountById: db.prepare("SELECT name FROM accounts WHERE id = ?"),
    insertAccount: db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)"),
    keyByHash: db.prepare(`${SELECT_KEYS} WHERE k.key_hash = ?`),
    keyById: db.prepare(`${SELECT_KEYS} WHERE k.id = ?`),
    insertKey: db.prepare(apiKeyRows.insertSql()),
    listKeys: db.prepare(`${SELECT_KEYS} ORDER BY k.created_at, k.id`),
    listKeysOf: db.prepare(`${SELECT_KEYS} WHERE a.name = ? ORDER BY k.created_at, k.id`),
    listKeysOfId: db.prepare(`${SELECT_KEYS} WHERE k.account_id = ? ORDER BY k.created_at, k.id`),
    revokeKey: db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
    touchKey: db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)"),
    countKeys: db.prepare("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL"),
  };

  const keyById = (id: string) => {
    const row = stmt.keyById.get(id) as Row | undefined;
    return row ? apiKeyRows.read(row) : undefined;
  };

  const ensureApiKeyTx = db.transaction((accountName: string, keyHash: Uint8Array, prefix: string, now: number, name: string) => {
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
    stmt.insertKey.run(apiKeyRows.values(ensuredApiKey({ id, accountId: account.id, accountName, name, prefix, keyHash, createdAt: now })));
    return { key: keyById(id)!, created: true };
  });

  // A duplicate hash fails the UNIQUE key_hash constraint: errors.ts names it a conflict.
  const createApiKeyTx = db.transaction((key: Omit<ApiKeyRecord, "accountName">, audit: AuditRecord | undefined) => {
    const account = stmt.accountById.get(key.accountId) as { name: string } | undefined;
    if (!account) throw notFound("account");
    stmt.insertKey.run(apiKeyRows.values({ ...key, accountName: account.name }));
    writeAudit(audit);
    return keyById(key.id)!;
  });

  const revokeTx = db.transaction((keyId: string, now: number, accountId: string | undefined, audit: AuditRecord | undefined) => {
    const found = keyById(keyId);
    if (!found || (accountId !== undefined && found.accountId !== accountId)) return undefined;
    // Only the call that revokes it writes key.revoked.
    if (stmt.revokeKey.run(now, keyId).changes > 0) writeAudit(audit);
    return keyById(keyId);
  });

  return {
    async ensureApiKey(accountName, keyHash, prefix, now, name = "") {
      return ensureApiKeyTx.immediate(accountName, keyHash, prefix, now, name);
    },

    async createApiKey(key, audit) {
      return createApiKeyTx.immediate(key, audit);
    },

    async findApiKeyByHash(keyHash) {
      const row = stmt.keyByHash.get(asBuffer(keyHash)) as Row | undefined;
      return row ? apiKeyRows.read(row) : undefined;
    },

    async listApiKeys(filter = {}) {
      const rows = (
        filter.accountId ? stmt.listKeysOfId.all(filter.accountId) : filter.accountName ? stmt.listKeysOf.all(filter.accountName) : stmt.listKeys.all()
      ) as Row[];
      return rows.map((row) => apiKeyRows.read(row)).filter((k) => !filter.accountName || k.accountName === filter.accountName);
    },

    async revokeApiKey(keyId, now, accountId, audit) {
      return revokeTx.immediate(keyId, now, accountId, audit);
    },

    async touchApiKey(keyId, at, notBefore) {
      stmt.touchKey.run(at, keyId, notBefore);
    },

    async countActiveApiKeys() {
      return (stmt.countKeys.get() as { n: number }).n;
    },
  };
}
