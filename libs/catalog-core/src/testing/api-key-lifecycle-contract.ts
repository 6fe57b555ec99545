import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "../ports.js";
import type { ApiKeyRecord } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { auditFixture, keyHash } from "./fixtures.js";

const T0 = 1_900_000_000_000;
const DAY = 86_400_000;

type NewKey = Omit<ApiKeyRecord, "accountName">;

function keyFixture(accountId: string, overrides: Partial<NewKey> = {}): NewKey {
  const id = newId();
  return {
    id,
    accountId,
    name: "session",
    prefix: "whc_test",
    keyHash: keyHash(`key-${id}`),
    scopes: ["dashboard"],
    endpointIds: [],
    createdAt: T0,
    expiresAt: undefined,
    lastUsedAt: undefined,
    revokedAt: undefined,
    ...overrides,
  };
}

function isKeyQuotaRefusal(e: unknown, limit: number): boolean {
  return AppError.is(e) && e.reason === "quota_exceeded" && e.meta.quota === "keys" && Number(e.meta.limit) === limit;
}

async function ensuredAccount(store: CatalogStore): Promise<string> {
  const name = `acct-${newId()}`;
  const { key } = await store.ensureApiKey(name, keyHash(name), "whc_boot", T0 - 400 * DAY);
  return key.accountId;
}

const idsOf = async (store: CatalogStore, accountId: string) => (await store.listApiKeys({ accountId })).map((k) => k.id);

/**
 * What keeps an account's keys bounded (ADR 0054): purgeApiKeys deletes the keys dead
 * (revoked, or expired) before the cutoff and no other, leaving their audit entries; and
 * createApiKey's quota counts the usable keys (not revoked, not expired at the new key's
 * createdAt), decided with the insert as the endpoint quota is.
 */
export function apiKeyLifecycleContract(ctx: ContractContext, openAnother?: () => Promise<CatalogStore>): void {
  describe("api key retention", () => {
    it("deletes only the keys revoked or expired before the cutoff, of every account, and keeps their audit entries", async () => {
      const store = ctx.store();
      const accountId = await ensuredAccount(store);
      const otherId = await ensuredAccount(store);
      const cutoff = T0 - 30 * DAY;
      const make = async (label: string, overrides: Partial<NewKey> = {}, revokedAt?: number, account = accountId) => {
        const key = keyFixture(account, { name: label, ...overrides });
        await store.createApiKey(key, auditFixture(account, { action: "key.created", at: key.createdAt, details: { id: key.id } }));
        if (revokedAt !== undefined) await store.revokeApiKey(key.id, revokedAt, account, auditFixture(account, { action: "key.revoked", at: revokedAt, details: { id: key.id } }));
        return key;
      };
      const old = { createdAt: T0 - 90 * DAY };
      const revokedLongAgo = await make("revoked long ago", old, cutoff - 1);
      const expiredLongAgo = await make("expired long ago", { ...old, expiresAt: cutoff - 1 });
      const othersRevoked = await make("another account's, revoked long ago", old, cutoff - DAY, otherId);
      const kept = [
        await make("revoked at the cutoff", old, cutoff),
        await make("revoked lately", old, T0 - DAY),
        await make("expired at the cutoff", { ...old, expiresAt: cutoff }),
        await make("expired lately", { ...old, expiresAt: T0 - DAY }),
        await make("expires later", { ...old, expiresAt: T0 + DAY }),
        // Never used, made long ago, neither revoked nor expiring: usable, so never deleted.
        await make("never expires", old),
      ];
      const before = await idsOf(store, accountId);

      expect(await store.purgeApiKeys(cutoff)).toBe(3);
      expect(await idsOf(store, accountId)).toEqual(before.filter((id) => id !== revokedLongAgo.id && id !== expiredLongAgo.id));
      expect(await idsOf(store, otherId)).not.toContain(othersRevoked.id);
      expect((await store.listApiKeys({ accountId })).map((k) => k.name)).toEqual(["", ...kept.map((k) => k.name)]);
      // A deleted key is unknown from now on, as any key never made.
      expect(await store.findApiKeyByHash(revokedLongAgo.keyHash)).toBeUndefined();
      expect(await store.findApiKeyByHash(kept[0]!.keyHash)).toBeDefined();
      // History survives the keys.
      const entries = (await store.listAudit({ accountId, limit: 100 })).entries;
      const about = (id: string) => entries.filter((e) => e.details.id === id).map((e) => e.action).sort();
      expect(about(revokedLongAgo.id)).toEqual(["key.created", "key.revoked"]);
      expect(about(expiredLongAgo.id)).toEqual(["key.created"]);

      expect(await store.purgeApiKeys(cutoff)).toBe(0);
    });
  });

  describe("api key quota", () => {
    it("refuses the key past the account's usable keys; a revoked or expired key frees its place; ensured keys are never refused", async () => {
      const store = ctx.store();
      const accountId = await ensuredAccount(store);
      const other = await ensuredAccount(store);
      const quota = 3;
      const revocable = await store.createApiKey(keyFixture(accountId), undefined, quota);
      await store.createApiKey(keyFixture(accountId, { expiresAt: T0 + DAY }), undefined, quota);
      // Revoked or expired long before: never counted.
      await store.createApiKey(keyFixture(accountId, { createdAt: T0 - 2 * DAY, expiresAt: T0 - DAY }));
      await store.createApiKey(keyFixture(accountId, { revokedAt: T0 - DAY }));

      const oneTooMany = keyFixture(accountId);
      const refused = await store.createApiKey(oneTooMany, auditFixture(accountId, { action: "key.created", details: { id: oneTooMany.id } }), quota).catch((e: unknown) => e);
      expect(isKeyQuotaRefusal(refused, quota), String(refused)).toBe(true);
      expect(await idsOf(store, accountId)).not.toContain(oneTooMany.id);
      expect(await store.findApiKeyByHash(oneTooMany.keyHash)).toBeUndefined();
      expect((await store.listAudit({ accountId, limit: 100 })).entries).toEqual([]);
      // Another account is not charged for this one's keys; without a quota nothing is counted.
      await expect(store.createApiKey(keyFixture(other), undefined, quota)).resolves.toMatchObject({ accountId: other });

      // The key expiring at T0 + DAY is no longer usable a day later: its place is free.
      await expect(store.createApiKey(keyFixture(accountId, { createdAt: T0 + DAY }), undefined, quota)).resolves.toMatchObject({ accountId });
      expect(isKeyQuotaRefusal(await store.createApiKey(keyFixture(accountId, { createdAt: T0 + DAY }), undefined, quota).catch((e: unknown) => e), quota)).toBe(true);
      await store.revokeApiKey(revocable.id, T0 + DAY, accountId);
      await expect(store.createApiKey(keyFixture(accountId, { createdAt: T0 + DAY }), undefined, quota)).resolves.toMatchObject({ accountId });

      // Bootstrap keys and an account's first key (ensureApiKey) pass a full account.
      const { created } = await store.ensureApiKey((await store.listApiKeys({ accountId }))[0]!.accountName, keyHash(`boot-${accountId}`), "whc_boot", T0 + DAY);
      expect(created).toBe(true);
      expect(isKeyQuotaRefusal(await store.createApiKey(keyFixture(accountId, { createdAt: T0 + DAY }), undefined, quota + 1).catch((e: unknown) => e), quota + 1)).toBe(true);
    });

    it("lets exactly the quota's worth of concurrent creates through", async () => {
      const store = ctx.store();
      const accountId = await ensuredAccount(store);
      const results = await Promise.allSettled(Array.from({ length: 16 }, () => store.createApiKey(keyFixture(accountId), undefined, 6)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(5);
      for (const r of results) if (r.status === "rejected") expect(isKeyQuotaRefusal(r.reason, 6), String(r.reason)).toBe(true);
      expect(await idsOf(store, accountId)).toHaveLength(6);
    });

    it("holds the quota across two stores on the same data creating at once", async (test) => {
      if (!openAnother) return test.skip();
      const second = await openAnother();
      try {
        const accountId = await ensuredAccount(ctx.store());
        const stores = [ctx.store(), second];
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.createApiKey(keyFixture(accountId), undefined, 8)));
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(7);
        for (const r of results) if (r.status === "rejected") expect(isKeyQuotaRefusal(r.reason, 8), String(r.reason)).toBe(true);
        expect(await idsOf(second, accountId)).toHaveLength(8);
      } finally {
        await second.close();
      }
    });
  });
}
