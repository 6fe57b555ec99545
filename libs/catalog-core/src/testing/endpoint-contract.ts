import { describe, it, expect } from "vitest";
import type { CatalogStore } from "../ports.js";
import type { AppendResult, EndpointPatch, EndpointRecord, NewEvent } from "../types.js";
import type { Clock } from "../ids.js";
import { endpointFixture, eventFixture } from "./fixtures.js";

/** What the contract's parts share: the store under test (replaced by a reopen) and helpers. */
export interface ContractContext {
  store(): CatalogStore;
  /** The clock appends read (the wall clock). */
  clock(): Clock;
  accountWithEndpoint(accountName?: string, overrides?: Partial<EndpointRecord>): Promise<{ accountId: string; endpoint: EndpointRecord }>;
  /** Closes the store and opens the same one (file, database) again; absent when the adapter cannot. */
  reopen?: (() => Promise<void>) | undefined;
}

const bytes = (...values: number[]) => new Uint8Array(values);
/** Compares secrets as plain bytes (stores hand back Uint8Array, Buffer or a view). */
const plain = (b: Uint8Array | undefined) => (b === undefined ? undefined : [...b]);

/** updateEndpoint: each field, secret rotation and removal, another account's endpoint. */
export function endpointUpdateContract(ctx: ContractContext): void {
  describe("endpoint updates", () => {
    it("creates with a response; without one, with the default and the sequence at 0", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const withResponse = await ctx.store().createEndpoint(endpointFixture(accountId, { responseJson: '{"status":201}' }));
      expect((await ctx.store().getEndpoint(withResponse.id))?.responseJson).toBe('{"status":201}');
      const { responseJson: _r, sequenceCounter: _n, ...bare } = endpointFixture(accountId);
      expect(await ctx.store().createEndpoint({ ...bare, sequenceCounter: 9 })).toMatchObject({ responseJson: "", sequenceCounter: 0 });
    });

    it("replaces each field given, moves updatedAt and keeps everything else", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const steps: EndpointPatch[] = [
        { displayName: "Renamed" },
        { status: "paused" },
        { operatingMode: "metadata_only" },
        { replayFromDashboard: false },
        { replayFromApi: false },
        { provider: "stripe" },
        { genericSignatureHeader: "X-Sig" },
        { genericSignaturePrefix: "sha256=" },
        { responseJson: '{"status":202,"body":"{{eventId}}"}' },
        { responseJson: "" },
        { operatingMode: "relay", forwardJson: '{"url":"https://app.example.test/hooks","keepPath":true}' },
        { operatingMode: "capture", forwardJson: "" },
        { displayName: "Both", status: "active" },
      ];
      let expected: EndpointRecord = endpoint;
      let now = endpoint.updatedAt;
      for (const patch of steps) {
        now += 1000;
        expected = { ...expected, ...patch, updatedAt: now };
        const updated = await ctx.store().updateEndpoint(accountId, endpoint.id, patch, now);
        expect(updated, JSON.stringify(patch)).toEqual(expected);
        expect(await ctx.store().getEndpoint(endpoint.id, accountId)).toEqual(expected);
      }
      expect(expected).toMatchObject({ slug: endpoint.slug, createdAt: endpoint.createdAt, responseJson: "", provider: "stripe" });
    });

    it("keeps the previous secret on rotation and sets secretRotatedAt", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint(undefined, { sealedSecret: bytes(1) });
      const first = await ctx.store().updateEndpoint(accountId, endpoint.id, { sealedSecret: bytes(2) }, 5000);
      expect(plain(first?.sealedSecret)).toEqual([2]);
      expect(plain(first?.sealedPreviousSecret)).toEqual([1]);
      expect(first?.secretRotatedAt).toBe(5000);
      const second = await ctx.store().updateEndpoint(accountId, endpoint.id, { sealedSecret: bytes(3) }, 6000);
      expect(plain(second?.sealedSecret)).toEqual([3]);
      expect(plain(second?.sealedPreviousSecret)).toEqual([2]);
      expect(second?.secretRotatedAt).toBe(6000);
      // A patch without a secret leaves all three as they are.
      const other = await ctx.store().updateEndpoint(accountId, endpoint.id, { displayName: "x" }, 7000);
      expect([plain(other?.sealedSecret), plain(other?.sealedPreviousSecret), other?.secretRotatedAt]).toEqual([[3], [2], 6000]);
      const read = await ctx.store().getEndpoint(endpoint.id);
      expect([plain(read?.sealedSecret), plain(read?.sealedPreviousSecret), read?.secretRotatedAt]).toEqual([[3], [2], 6000]);
    });

    it("sets a first secret without a previous one", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const updated = await ctx.store().updateEndpoint(accountId, endpoint.id, { sealedSecret: bytes(9) }, 5000);
      expect(plain(updated?.sealedSecret)).toEqual([9]);
      expect(updated?.sealedPreviousSecret).toBeUndefined();
      expect(updated?.secretRotatedAt).toBe(5000);
    });

    it("clears the secret, the previous one and the rotation time", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint(undefined, { sealedSecret: bytes(1) });
      await ctx.store().updateEndpoint(accountId, endpoint.id, { sealedSecret: bytes(2) }, 5000);
      const cleared = await ctx.store().updateEndpoint(accountId, endpoint.id, { clearSecret: true }, 6000);
      const read = await ctx.store().getEndpoint(endpoint.id, accountId);
      for (const e of [cleared, read]) {
        expect(e?.sealedSecret).toBeUndefined();
        expect(e?.sealedPreviousSecret).toBeUndefined();
        expect(e?.secretRotatedAt).toBeUndefined();
        expect(e?.updatedAt).toBe(6000);
      }
    });

    it("keeps the forward settings and their target secret; removing the settings removes the secret", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const { forwardJson: _f, ...bare } = endpointFixture(accountId);
      expect((await ctx.store().createEndpoint(bare)).forwardJson).toBe("");
      const forwardJson = '{"url":"https://app.example.test/hooks","keepPath":false,"timeoutMs":5000,"maxAttempts":3}';
      const created = await ctx.store().createEndpoint(endpointFixture(accountId, { operatingMode: "relay", forwardJson, sealedTargetSecret: bytes(5) }));
      const id = created.id;
      const read = await ctx.store().getEndpoint(id, accountId);
      expect([read?.forwardJson, plain(read?.sealedTargetSecret)]).toEqual([forwardJson, [5]]);
      expect(plain(created.sealedTargetSecret)).toEqual([5]);

      const steps: [EndpointPatch, string, number[] | undefined][] = [
        [{ sealedTargetSecret: bytes(6) }, forwardJson, [6]],
        [{ displayName: "x" }, forwardJson, [6]],
        [{ clearTargetSecret: true }, forwardJson, undefined],
        [{ sealedTargetSecret: bytes(7), clearTargetSecret: true }, forwardJson, [7]],
        [{ forwardJson: '{"url":"https://b.example.test/"}' }, '{"url":"https://b.example.test/"}', [7]],
        [{ forwardJson: "", operatingMode: "capture" }, "", undefined],
        [{ forwardJson: forwardJson, sealedTargetSecret: bytes(8) }, forwardJson, [8]],
        // Removing the settings wins over a secret given with it.
        [{ forwardJson: "", sealedTargetSecret: bytes(9) }, "", undefined],
      ];
      let now = 10_000;
      for (const [patch, json, secret] of steps) {
        now += 1000;
        const updated = await ctx.store().updateEndpoint(accountId, id, patch, now);
        const again = await ctx.store().getEndpoint(id);
        for (const e of [updated, again]) {
          expect([e?.forwardJson, plain(e?.sealedTargetSecret), e?.updatedAt], JSON.stringify(patch)).toEqual([json, secret, now]);
        }
      }
    });

    it("keeps the destinations' sealed secrets beside them; removing the destinations removes every secret (design §17)", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const destinations = '[{"id":"0190a000-0000-7000-8000-00000000000a","name":"a","url":"https://a.example.test/","targetSecretSet":true}]';
      const created = await ctx.store().createEndpoint(endpointFixture(accountId, { operatingMode: "relay", forwardJson: destinations, sealedDestinationSecrets: bytes(21) }));
      expect(plain((await ctx.store().getEndpoint(created.id))?.sealedDestinationSecrets)).toEqual([21]);
      // A legacy endpoint's target secret (one destination, before destinations) moves aside for the new ones.
      const legacy = await ctx.store().createEndpoint(
        endpointFixture(accountId, { operatingMode: "relay", forwardJson: '{"url":"https://app.example.test/hooks"}', sealedTargetSecret: bytes(5) }),
      );
      const steps: [EndpointPatch, string, number[] | undefined, number[] | undefined][] = [
        [{ forwardJson: destinations, sealedDestinationSecrets: bytes(22), clearTargetSecret: true }, destinations, undefined, [22]],
        [{ displayName: "kept" }, destinations, undefined, [22]],
        [{ sealedDestinationSecrets: new Uint8Array() }, destinations, undefined, undefined],
        [{ sealedDestinationSecrets: bytes(23) }, destinations, undefined, [23]],
        [{ forwardJson: "", operatingMode: "capture", sealedDestinationSecrets: bytes(24) }, "", undefined, undefined],
      ];
      let now = 20_000;
      for (const [patch, json, target, secrets] of steps) {
        now += 1000;
        const updated = await ctx.store().updateEndpoint(accountId, legacy.id, patch, now);
        const again = await ctx.store().getEndpoint(legacy.id);
        for (const e of [updated, again]) {
          expect([e?.forwardJson, plain(e?.sealedTargetSecret), plain(e?.sealedDestinationSecrets)], JSON.stringify(patch)).toEqual([json, target, secrets]);
        }
      }
    });

    it("keeps the inbound protection with its sealed secrets, replaced and removed together, and counts its rejections", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const { inboundJson: _i, rejectedCount: _r, ...bare } = endpointFixture(accountId);
      const plainOne = await ctx.store().createEndpoint(bare);
      expect([plainOne.inboundJson, plainOne.sealedInbound, plainOne.rejectedCount]).toEqual(["", undefined, 0]);
      const inboundJson = '{"methods":["POST"],"basicAuth":{"username":"u"}}';
      const created = await ctx.store().createEndpoint(endpointFixture(accountId, { inboundJson, sealedInbound: bytes(3) }));
      const id = created.id;
      expect([created.inboundJson, plain(created.sealedInbound)]).toEqual([inboundJson, [3]]);

      const other = '{"allowIps":["203.0.113.0/24"]}';
      const steps: [EndpointPatch, string, number[] | undefined][] = [
        [{ displayName: "y" }, inboundJson, [3]],
        [{ inboundJson: other, sealedInbound: bytes(4) }, other, [4]],
        [{ inboundJson: "" }, "", undefined],
        [{ inboundJson, sealedInbound: bytes(5) }, inboundJson, [5]],
        // Removing the protection wins over secrets given with it.
        [{ inboundJson: "", sealedInbound: bytes(6) }, "", undefined],
      ];
      let now = 20_000;
      for (const [patch, json, sealed] of steps) {
        now += 1000;
        const updated = await ctx.store().updateEndpoint(accountId, id, patch, now);
        const again = await ctx.store().getEndpoint(id);
        for (const e of [updated, again]) expect([e?.inboundJson, plain(e?.sealedInbound)], JSON.stringify(patch)).toEqual([json, sealed]);
      }

      await ctx.store().countRejections([
        { endpointId: id, count: 3 },
        { endpointId: plainOne.id, count: 1 },
        { endpointId: "01a20000-0000-7000-8000-0000000000aa", count: 5 },
      ]);
      await ctx.store().countRejections([{ endpointId: id, count: 2 }]);
      await ctx.store().countRejections([]);
      expect((await ctx.store().getEndpoint(id))?.rejectedCount).toBe(5);
      expect((await ctx.store().getEndpoint(plainOne.id, accountId))?.rejectedCount).toBe(1);
      // An update leaves the count alone.
      expect((await ctx.store().updateEndpoint(accountId, id, { displayName: "z" }, now + 1000))?.rejectedCount).toBe(5);
    });

    it("never leaves a relay or proxy endpoint without forward settings, whatever the patch", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const forwardJson = '{"url":"https://app.example.test/hooks"}';
      const relay = await ctx.store().createEndpoint(endpointFixture(accountId, { operatingMode: "relay", forwardJson }));
      const capture = await ctx.store().createEndpoint(endpointFixture(accountId, { operatingMode: "capture", forwardJson: "" }));
      const refused: [EndpointRecord, EndpointPatch][] = [
        [relay, { forwardJson: "" }],
        [relay, { forwardJson: "", displayName: "x" }],
        [relay, { forwardJson: "", operatingMode: "proxy" }],
        [capture, { operatingMode: "relay" }],
        [capture, { operatingMode: "proxy", displayName: "x" }],
      ];
      for (const [endpoint, patch] of refused) {
        const before = await ctx.store().getEndpoint(endpoint.id);
        const err = await ctx.store().updateEndpoint(accountId, endpoint.id, patch, 20_000).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, JSON.stringify(patch)).toMatchObject({ reason: "validation_failed", field: "forward", fieldReason: "required" });
        expect(await ctx.store().getEndpoint(endpoint.id)).toEqual(before);
      }
      const allowed: [EndpointRecord, EndpointPatch, string, string][] = [
        [relay, { operatingMode: "proxy" }, "proxy", forwardJson],
        [relay, { forwardJson: "", operatingMode: "capture" }, "capture", ""],
        [capture, { operatingMode: "relay", forwardJson }, "relay", forwardJson],
        [capture, { displayName: "renamed" }, "relay", forwardJson],
      ];
      for (const [endpoint, patch, mode, json] of allowed) {
        const updated = await ctx.store().updateEndpoint(accountId, endpoint.id, patch, 21_000);
        expect([updated?.operatingMode, updated?.forwardJson], JSON.stringify(patch)).toEqual([mode, json]);
      }
    });

    it("finds nothing and changes nothing for another account or an unknown id", async () => {
      const a = await ctx.accountWithEndpoint("a", { sealedSecret: bytes(1), responseJson: '{"status":500}', forwardJson: '{"url":"https://a.example.test/"}', sealedTargetSecret: bytes(2) });
      const b = await ctx.accountWithEndpoint("b");
      const before = await ctx.store().getEndpoint(a.endpoint.id);
      const patch: EndpointPatch = { displayName: "taken", clearSecret: true, responseJson: "", resetSequence: true, forwardJson: "" };
      expect(await ctx.store().updateEndpoint(b.accountId, a.endpoint.id, patch, 9000)).toBeUndefined();
      expect(await ctx.store().updateEndpoint(a.accountId, "00000000-0000-7000-8000-000000000000", patch, 9000)).toBeUndefined();
      expect(await ctx.store().getEndpoint(a.endpoint.id)).toEqual(before);
    });

    it("keeps the store's counters: events counted before an update still are", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      await ctx.store().appendEvents([eventFixture(endpoint), eventFixture(endpoint)], ctx.clock());
      const before = await ctx.store().getEndpoint(endpoint.id);
      const updated = await ctx.store().updateEndpoint(accountId, endpoint.id, { displayName: "x" }, Date.now());
      expect(updated?.eventCount).toBe(2);
      expect(updated?.lastEventAt).toBe(before?.lastEventAt);
    });
  });
}

const SEQUENCE = [500, 500, 200];

/** An event answered from SEQUENCE, or (code given) one answered otherwise. */
function capture(endpoint: Pick<EndpointRecord, "id" | "accountId">, plainCode?: number): NewEvent {
  return plainCode === undefined
    ? eventFixture(endpoint, { responseCode: 0, sequenceStatuses: SEQUENCE })
    : eventFixture(endpoint, { responseCode: plainCode });
}

const codes = (results: (AppendResult | undefined)[]) => results.map((r) => r?.responseCode);
const indexes = (results: (AppendResult | undefined)[]) => results.map((r) => r?.sequenceIndex);

/** The response sequence: counted by the store, in the append's transaction, across restarts. */
export function responseSequenceContract(ctx: ContractContext): void {
  describe("response sequence", () => {
    it("gives each sequence capture the next entry, across batches, other captures untouched", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const append = (events: NewEvent[]) => ctx.store().appendEvents(events, ctx.clock());
      const batches = [
        await append([capture(endpoint), capture(endpoint, 200), capture(endpoint)]),
        await append([capture(endpoint), capture(endpoint, 413), capture(endpoint), capture(endpoint)]),
        await append([capture(endpoint, 200), capture(endpoint), capture(endpoint)]),
      ];
      expect(batches.map(codes)).toEqual([[500, 200, 500], [200, 413, 500, 500], [200, 200, 500]]);
      expect(batches.map(indexes)).toEqual([[0, undefined, 1], [2, undefined, 3, 4], [undefined, 5, 6]]);

      const all = batches.flat().map((r) => r!);
      const sequenced = all.filter((r) => r.sequenceIndex !== undefined);
      expect(sequenced.map((r) => r.responseCode)).toEqual([500, 500, 200, 500, 500, 200, 500]);
      expect(sequenced.map((r) => r.sequenceIndex)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      for (const r of all) expect((await ctx.store().getEvent(accountId, endpoint.id, r.id))?.responseCode).toBe(r.responseCode);

      const listed = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50 });
      expect(new Map(listed.events.map((e) => [e.id, e.responseCode]))).toEqual(new Map(all.map((r) => [r.id, r.responseCode])));
      for (const code of [500, 200, 413]) {
        const page = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, responseCode: code });
        const expected = all.filter((r) => r.responseCode === code).map((r) => r.id);
        expect(page.events.map((e) => e.id).sort(), String(code)).toEqual(expected.sort());
      }
      expect((await ctx.store().getEndpoint(endpoint.id))?.sequenceCounter).toBe(7);
    });

    it("restarts at the first entry after resetSequence", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      await ctx.store().appendEvents([capture(endpoint), capture(endpoint), capture(endpoint), capture(endpoint)], ctx.clock());
      const reset = await ctx.store().updateEndpoint(accountId, endpoint.id, { resetSequence: true }, Date.now());
      expect(reset?.sequenceCounter).toBe(0);
      const after = await ctx.store().appendEvents([capture(endpoint), capture(endpoint), capture(endpoint)], ctx.clock());
      expect(indexes(after)).toEqual([0, 1, 2]);
      expect(codes(after)).toEqual([500, 500, 200]);
    });

    it("counts each endpoint on its own and gives nothing to an endpoint that is gone", async () => {
      const a = await ctx.accountWithEndpoint();
      const b = await ctx.accountWithEndpoint();
      const gone = await ctx.accountWithEndpoint();
      await ctx.store().deleteEndpoint(gone.accountId, gone.endpoint.id);
      const results = await ctx.store().appendEvents(
        [capture(a.endpoint), capture(b.endpoint), capture(gone.endpoint), capture(a.endpoint), capture(b.endpoint)],
        ctx.clock(),
      );
      expect(indexes(results)).toEqual([0, 0, undefined, 1, 1]);
      expect(results[2]).toBeUndefined();
    });

    it("gives each position out once under concurrent appends", async () => {
      const { endpoint } = await ctx.accountWithEndpoint();
      const batches = await Promise.all(
        Array.from({ length: 10 }, () => ctx.store().appendEvents([capture(endpoint), capture(endpoint, 202), capture(endpoint)], ctx.clock())),
      );
      const taken = batches.flat().filter((r) => r?.sequenceIndex !== undefined);
      expect(taken.map((r) => r!.sequenceIndex).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      for (const r of taken) expect(r!.responseCode).toBe(SEQUENCE[r!.sequenceIndex! % SEQUENCE.length]);
      expect((await ctx.store().getEndpoint(endpoint.id))?.sequenceCounter).toBe(20);
    });

    it("continues the sequence after the store is closed and opened again", async (test) => {
      if (!ctx.reopen) return test.skip();
      const { endpoint } = await ctx.accountWithEndpoint();
      expect(indexes(await ctx.store().appendEvents([capture(endpoint), capture(endpoint)], ctx.clock()))).toEqual([0, 1]);
      await ctx.reopen();
      const after = await ctx.store().appendEvents([capture(endpoint), capture(endpoint)], ctx.clock());
      expect(indexes(after)).toEqual([2, 3]);
      expect(codes(after)).toEqual([200, 500]);
    });
  });
}
