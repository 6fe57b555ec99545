import { describe, it, expect } from "vitest";
import { Query, updateOne } from "mingo";
import { keyHash } from "@whc/catalog-core/testing";
import { keyQuotaGuard, purgeableKeysFilter, usableKeysFilter } from "./api-keys.js";
import { apiKeyDocs } from "./records.js";
import type { Doc } from "./documents.js";

/*
 * The documents of the key quota and the key retention (ADR 0054), checked with mingo: no
 * MongoDB server runs on the build machines. Keys are written by apiKeyDocs, as the adapter
 * writes them (no field for an absent expiry or revocation), beside one stored with nulls.
 */

const T = 1_900_000_000_000;

function stored(id: string, accountId: string, fields: { expiresAt?: number; revokedAt?: number } = {}): Doc {
  return apiKeyDocs.write({
    id,
    accountId,
    accountName: accountId,
    name: id,
    prefix: "whc_test",
    keyHash: keyHash(id),
    scopes: ["dashboard"],
    endpointIds: [],
    createdAt: T - 100,
    expiresAt: fields.expiresAt,
    lastUsedAt: undefined,
    revokedAt: fields.revokedAt,
  });
}

const keys: Doc[] = [
  stored("usable", "a"),
  stored("expires-later", "a", { expiresAt: T + 1 }),
  stored("expires-now", "a", { expiresAt: T }),
  stored("expired", "a", { expiresAt: T - 50 }),
  stored("revoked", "a", { revokedAt: T - 50 }),
  stored("revoked-and-expiring", "a", { revokedAt: T - 50, expiresAt: T + 1 }),
  { ...stored("nulls", "a"), expiresAt: null, revokedAt: null },
  stored("theirs", "b"),
];
const ids = (filter: Doc, docs: Doc[] = keys) => new Query(filter).find<Doc>(docs).all().map((d) => d._id as string).sort();

describe("MongoDB key quota documents (checked with mingo)", () => {
  it("count the account's keys neither revoked nor expired at the new key's time, and no other account's", () => {
    expect(ids(usableKeysFilter("a", T))).toEqual(["expires-later", "nulls", "usable"]);
    expect(ids(usableKeysFilter("a", T - 1))).toEqual(["expires-later", "expires-now", "nulls", "usable"]);
    expect(ids(usableKeysFilter("b", T))).toEqual(["theirs"]);
    expect(new Query(usableKeysFilter("a", T)).find(keys).limit(2).all()).toHaveLength(2);
  });

  it("move the creating account's document, and only it, so that two creates of one account conflict", () => {
    const accounts: Doc[] = [
      { _id: "a", name: "a", createdAt: 1, endpointCreates: 3 },
      { _id: "b", name: "b", createdAt: 1 },
    ];
    const guard = keyQuotaGuard("a");
    expect(updateOne(accounts, guard.filter, guard.update as never).modifiedCount).toBe(1);
    expect(updateOne(accounts, guard.filter, guard.update as never).modifiedCount).toBe(1);
    expect(accounts).toEqual([
      { _id: "a", name: "a", createdAt: 1, endpointCreates: 3, keyCreates: 2 },
      { _id: "b", name: "b", createdAt: 1 },
    ]);
  });
});

describe("MongoDB key retention documents (checked with mingo)", () => {
  it("select the keys revoked or expired before the cutoff, of every account, and never a usable one", () => {
    const old = [stored("old-revoked", "b", { revokedAt: T - 1000 }), stored("old-expired", "c", { expiresAt: T - 1000 })];
    expect(ids(purgeableKeysFilter(T - 50), [...keys, ...old])).toEqual(["old-expired", "old-revoked"]);
    expect(ids(purgeableKeysFilter(T - 49), [...keys, ...old])).toEqual(["expired", "old-expired", "old-revoked", "revoked", "revoked-and-expiring"]);
    // However late the cutoff, a key with neither a revocation nor an expiry stays.
    expect(ids(purgeableKeysFilter(Number.MAX_SAFE_INTEGER))).not.toContain("usable");
    expect(ids(purgeableKeysFilter(Number.MAX_SAFE_INTEGER))).not.toContain("nulls");
    expect(ids(purgeableKeysFilter(Number.MAX_SAFE_INTEGER))).not.toContain("theirs");
  });
});
