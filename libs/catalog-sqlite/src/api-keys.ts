import type Database from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { AppError, notFound } from "@whc/errors";
import { ensuredApiKey, keyQuotaExceeded, type ApiKeyRecord, type AuditRecord, type CatalogStore } from "@whc/catalog-core";
import { apiKeyRows, asBuffer, type Row } from "./rows.js";
import type { WriteAudit } from "./audit.js";

export type ApiKeyMethods = Pick<
  CatalogStore,
  "ensureApiKey" | "createApiKey" | "findApiKeyByHash" | "listApiKeys" | "revokeApiKey" | "touchApiKey" | "countActiveApiKeys" | "purgeApiKeys"
>;

const SELECT_KEYS = "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id";

/** Keys deleted per transaction by purgeApiKeys: the write lock is never held for long. */
const PURGE_CHUNK = 2000;

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
    // The account's usable keys at a time, counted no further than the quota (ADR 0054), over
    // the index api_keys_account: an account holds at most the quota plus what retention keeps.
    countUsableUpTo: db.prepare(
      "SELECT COUNT(*) AS n FROM (SELECT 1 FROM api_keys WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) LIMIT ?)",
    ),
    // Never a usable key: only one with a revocation or an expiry before the cutoff.
    purgeChunk: db.prepare(`DELETE FROM api_keys WHERE id IN (SELECT id FROM api_keys WHERE revoked_at < ? OR expires_at < ? LIMIT ${PURGE_CHUNK})`),
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
  // IMMEDIATE (below): the count and the insert happen under the write lock, so no other
  // create, from this process or another one sharing the file, lands between them.
  const createApiKeyTx = db.transaction((key: Omit<ApiKeyRecord, "accountName">, audit: AuditRecord | undefined, quota: number | undefined) => {
    const account = stmt.accountById.get(key.accountId) as { name: string } | undefined;
    if (!account) throw notFound("account");
    if (quota !== undefined && (stmt.countUsableUpTo.get(key.accountId, key.createdAt, quota) as { n: number }).n >= quota) {
      throw keyQuotaExceeded(quota);
    }
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

    async createApiKey(key, audit, quota) {
      return createApiKeyTx.immediate(key, audit, quota);
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

    async purgeApiKeys(before) {
      let total = 0;
      for (;;) {
        const { changes } = db.transaction(() => stmt.purgeChunk.run(before, before)).immediate();
        total += changes;
        if (changes < PURGE_CHUNK) return total;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
