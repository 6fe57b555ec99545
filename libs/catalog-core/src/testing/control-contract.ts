import { describe, it, expect } from "vitest";
import { randomUUID } from "node:crypto";
import type { CatalogStore } from "../ports.js";
import type { AttemptRecord, DeliveryClaim, EndpointRecord, Stamp } from "../types.js";
import type { ContractContext } from "./endpoint-contract.js";
import { PACED_SEND_DELAY_MS } from "../breaker.js";
import { eventFixture, forwardAttemptFixture } from "./fixtures.js";
import type { DeliveryState } from "@whc/api-model";
import type { AttemptTransition, DeliveryRef } from "@whc/ports";

const CLAIM_MS = 30_000;
const TARGET = "https://control.example.test/hooks";

interface DestinationSpec {
  rateLimit?: { perSecond?: number; perMinute?: number; concurrency?: number };
  breaker?: { failures: number; probeAfterMs: number };
  paused?: boolean;
  maxAttempts?: number;
}

const failed = (n: number, extra: Partial<AttemptRecord> = {}) => forwardAttemptFixture(n, { status: 503, ...extra });
const ok = (n: number) => forwardAttemptFixture(n, { status: 200 });
const worker = (owner: string, state: DeliveryState, nextAttemptAt?: number): AttemptTransition => ({ kind: "worker", owner, state, nextAttemptAt });

/**
 * Delivery control (design §18; ADRs 0087, 0088): rate limits, concurrency, the breaker with its
 * held deliveries, probes and paced release, and the manual pause, as every store decides them
 * in its claims and records.
 */
export function deliveryControlContract(ctx: ContractContext): void {
  const store = (): CatalogStore => ctx.store();

  /** A relay endpoint with one destination (fresh id) and `count` captures to it, 1 ms apart. */
  async function destinationWith(spec: DestinationSpec, count: number) {
    const destinationId = randomUUID();
    const destination = { id: destinationId, name: "billing", url: TARGET, keepPath: false, timeoutMs: 1000, maxAttempts: spec.maxAttempts ?? 6, targetSecretSet: false, ...spec };
    const { accountId, endpoint } = await ctx.accountWithEndpoint(undefined, { operatingMode: "relay", forwardJson: JSON.stringify([destination]) });
    const stamps = await append(endpoint, destinationId, count);
    const refs: DeliveryRef[] = stamps.map((s) => ({ accountId, endpointId: endpoint.id, eventId: s.id, destinationId }));
    return { accountId, endpoint, destinationId, refs, t0: stamps[stamps.length - 1]?.receivedAt ?? Date.now() };
  }

  async function append(endpoint: Pick<EndpointRecord, "id" | "accountId">, destinationId: string, count: number): Promise<Stamp[]> {
    const events = Array.from({ length: count }, () => eventFixture(endpoint, { forward: { scheduled: true, deliveries: [{ destinationId, target: TARGET }] } }));
    let t = Date.now();
    return (await store().appendEvents(events, () => (t += 1))) as Stamp[];
  }

  const claim = (owner: string, now: number, limit = 50) => store().claimDeliveries(owner, now, CLAIM_MS, limit);
  const deliveryOf = async (ref: DeliveryRef) =>
    (await store().getEvent(ref.accountId, ref.endpointId, ref.eventId))?.deliveries.find((d) => d.destinationId === ref.destinationId);
  const breakerOf = async (endpointId: string, destinationId: string) => (await store().destinationBreakers([endpointId])).find((b) => b.destinationId === destinationId);
  const record = (c: DeliveryClaim, attempt: AttemptRecord, transition: AttemptTransition, now: number) =>
    store().recordForwardAttempt(c, attempt, transition, undefined, now);
  const indexOf = (refs: DeliveryRef[], c: DeliveryClaim) => refs.findIndex((r) => r.eventId === c.eventId);

  /** Opens the breaker of a destination with `failures: 2`: two claimed deliveries fail. Answers the notice. */
  async function opened(refs: DeliveryRef[], t0: number) {
    const { claims } = await claim("w1", t0, 2);
    expect(claims.map((c) => c.eventId)).toEqual([refs[0]!.eventId, refs[1]!.eventId]);
    const first = await record(claims[0]!, failed(1), worker("w1", "pending", t0 + 10_000), t0 + 1);
    expect(first?.delivery.state).toBe("pending");
    expect(first?.breaker).toBeUndefined();
    const second = await record(claims[1]!, failed(1), worker("w1", "pending", t0 + 10_000), t0 + 2);
    return second!;
  }

  describe("delivery control: rate limit and concurrency (design §18)", () => {
    it("spaces a destination's claims by its rate: one a turn, the others moved to their turns, counted as limiter waits", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ rateLimit: { perSecond: 5 } }, 6);
      const first = await claim("w1", t0);
      expect(first.claims.map((c) => c.eventId)).toEqual([refs[0]!.eventId]);
      // Sent a fixed time after its turn, whatever the worker's preparation takes (ADR 0087).
      expect(first.claims[0]!.sendAfterMs).toBe(PACED_SEND_DELAY_MS);
      expect(first.limiterWaits).toBe(5);
      // Each waiting one is due at its own turn, 200 ms apart, oldest first; still pending.
      for (const [i, ref] of refs.slice(1).entries()) expect(await deliveryOf(ref)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 200 * (i + 1) });
      expect(await store().nextDueAt(t0)).toBe(t0 + 200);
      // Another replica gets nothing before the turn, then the next one alone.
      expect((await claim("w2", t0 + 199)).claims).toEqual([]);
      const second = await claim("w2", t0 + 200);
      expect(second.claims.map((c) => c.eventId)).toEqual([refs[1]!.eventId]);
      expect(second.limiterWaits).toBe(0);
      // A claim late for its turn takes it at its own time: the next turn is a spacing after the
      // claim, so the lateness that delays this send cannot bunch it with the next.
      const third = await claim("w1", t0 + 460);
      expect(third.claims.map((c) => [c.eventId, c.sendAfterMs])).toEqual([[refs[2]!.eventId, PACED_SEND_DELAY_MS]]);
      expect((await claim("w2", t0 + 659)).claims).toEqual([]);
      // A claim late by a second takes one turn only: no burst to make up for it.
      const late = await claim("w1", t0 + 1800);
      expect(late.claims.map((c) => [c.eventId, c.sendAfterMs])).toEqual([[refs[4]!.eventId, PACED_SEND_DELAY_MS]]);
      expect((await claim("w2", t0 + 1999)).claims).toEqual([]);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "closed", held: 0 });
    });

    it("moves a long backlog a bounded slice per claim; the next claim queues the rest after it", async () => {
      const { refs, t0 } = await destinationWith({ rateLimit: { perSecond: 100 } }, 1003);
      const first = await claim("w1", t0, 5);
      expect(first.claims.map((c) => c.eventId)).toEqual([refs[0]!.eventId]);
      expect(first.limiterWaits).toBe(1000);
      expect(await deliveryOf(refs[1000]!)).toMatchObject({ nextAttemptAt: t0 + 10_000 });
      // Not moved by this claim: still due when it was appended.
      expect((await deliveryOf(refs[1001]!))!.nextAttemptAt).toBeLessThanOrEqual(t0);
      const second = await claim("w2", t0, 5);
      expect(second.limiterWaits).toBe(2);
      expect([(await deliveryOf(refs[1001]!))?.nextAttemptAt, (await deliveryOf(refs[1002]!))?.nextAttemptAt]).toEqual([t0 + 10_010, t0 + 10_020]);
    });

    it("counts per minute too", async () => {
      const { refs, t0 } = await destinationWith({ rateLimit: { perMinute: 2 } }, 3);
      expect((await claim("w1", t0)).claims).toHaveLength(1);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ nextAttemptAt: t0 + 30_000 });
      expect(await deliveryOf(refs[2]!)).toMatchObject({ nextAttemptAt: t0 + 60_000 });
    });

    it("keeps at most `concurrency` in flight across claims; a record frees one; others are not starved", async () => {
      const limited = await destinationWith({ rateLimit: { concurrency: 2 } }, 4);
      const free = await destinationWith({}, 1);
      const now = Math.max(limited.t0, free.t0);
      const first = await claim("w1", now);
      expect(first.claims.map((c) => c.eventId).sort()).toEqual([limited.refs[0]!.eventId, limited.refs[1]!.eventId, free.refs[0]!.eventId].sort());
      // Not moved: still due, taken as soon as one of the two is done.
      expect(await deliveryOf(limited.refs[2]!)).toMatchObject({ state: "pending", nextAttemptAt: limited.t0 - 1 });
      expect((await claim("w2", now + 1)).claims).toEqual([]);
      const done = first.claims.find((c) => c.eventId === limited.refs[0]!.eventId)!;
      await record(done, ok(1), worker("w1", "delivered"), now + 2);
      expect((await claim("w2", now + 3)).claims.map((c) => c.eventId)).toEqual([limited.refs[2]!.eventId]);
      // A claim that lapsed (its replica died) no longer counts.
      expect((await claim("w2", now + CLAIM_MS + 1)).claims.length).toBeGreaterThan(0);
    });
  });

  describe("delivery control: the breaker (design §18)", () => {
    it("opens after `failures` in a row: the failing delivery and every waiting one are held, new ones too; nothing is sent", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 } }, 4);
      const second = await opened(refs, t0);
      expect(second.delivery.state).toBe("held");
      expect(second.forwardState).toBe("pending");
      expect(second.breaker).toMatchObject({ change: "opened", name: "billing", breaker: { state: "open", consecutiveFailures: 2, held: 4, since: t0 + 2, nextProbeAt: t0 + 5002 } });
      for (const ref of refs) expect(await deliveryOf(ref)).toMatchObject({ state: "held", nextAttemptAt: undefined });
      // Held never expires and is never claimed; a capture arriving now is held at its claim.
      const [late] = await append(endpoint, destinationId, 1);
      expect((await claim("w1", late!.receivedAt)).claims).toEqual([]);
      expect(await deliveryOf({ ...refs[0]!, eventId: late!.id })).toMatchObject({ state: "held" });
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "open", held: 5, nextProbeAt: t0 + 5002 });
      // Waiting workers look again when the probe is due.
      expect(await store().nextDueAt(late!.receivedAt)).toBe(t0 + 5002);
      expect((await store().listEvents({ accountId: refs[0]!.accountId, endpointId: endpoint.id, limit: 50, forwardState: "pending" })).events).toHaveLength(5);
    });

    it("probes one held delivery, oldest first, once across replicas; a failed probe re-opens with twice the delay, its attempt not counted", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 }, maxAttempts: 2 }, 3);
      await opened(refs, t0);
      expect((await claim("w1", t0 + 5001)).claims).toEqual([]);
      const probe = await claim("w1", t0 + 5002);
      // Its first attempt failed and counted; it was held after (no attempt): this is its second.
      expect(probe.claims).toEqual([{ ...refs[0]!, attempt: 2 }]);
      expect((await claim("w2", t0 + 5003)).claims).toEqual([]);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "half_open", since: t0 + 5002 });
      // maxAttempts is 2: the worker would call this exhausted; the store holds it instead.
      const again = await record(probe.claims[0]!, failed(2), worker("w1", "exhausted"), t0 + 5010);
      expect(again?.delivery.state).toBe("held");
      expect(again?.breaker).toBeUndefined();
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "open", consecutiveFailures: 3, nextProbeAt: t0 + 15_010, held: 3 });
      const next = await claim("w2", t0 + 15_010);
      // Two attempts made, one of them a probe that ended held: this one counts as the second.
      expect(next.claims).toEqual([{ ...refs[0]!, attempt: 3, counted: 2 }]);
    });

    it("spares the attempt of a probe whose claim lapsed unrecorded (its sender killed), so it is claimed again, not exhausted", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 }, maxAttempts: 2 }, 2);
      await opened(refs, t0);
      const probe = await claim("w1", t0 + 5002);
      expect(probe.claims).toEqual([{ ...refs[0]!, attempt: 2 }]);
      // w1 dies holding it: nothing is recorded. Its claim ends; the probe goes again, the lost
      // attempt spared (maxAttempts is 2: counted as the third, the worker would refuse to send it).
      const lapsed = t0 + 5002 + CLAIM_MS;
      expect((await claim("w2", lapsed - 1)).claims).toEqual([]);
      const again = await claim("w2", lapsed);
      expect(again.claims).toEqual([{ ...refs[0]!, attempt: 3, counted: 2 }]);
      const closed = await record(again.claims[0]!, ok(3), worker("w2", "delivered"), lapsed + 10);
      expect(closed?.breaker).toMatchObject({ change: "closed" });
      // The drain's current one, its worker killed too: claimed again when its claim ends, spared.
      const drain = (await claim("w1", lapsed + 200)).claims;
      expect(drain.map((c) => c.eventId)).toEqual([refs[1]!.eventId]);
      const redrain = (await claim("w2", lapsed + 200 + CLAIM_MS)).claims;
      expect(redrain).toEqual([{ ...refs[1]!, attempt: drain[0]!.attempt + 1, counted: drain[0]!.counted ?? drain[0]!.attempt }]);
      await record(redrain[0]!, ok(redrain[0]!.attempt), worker("w2", "delivered"), lapsed + 300 + CLAIM_MS);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "closed", held: 0 });
    });

    it("closes on a probe's success and drains the held one at a time, oldest first, 10 a second; new captures queue behind them", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 } }, 5);
      await opened(refs, t0);
      const probe = (await claim("w1", t0 + 5002)).claims[0]!;
      expect(probe.eventId).toBe(refs[0]!.eventId);
      const closed = await record(probe, ok(2), worker("w1", "delivered"), t0 + 5100);
      expect(closed?.delivery.state).toBe("delivered");
      expect(closed?.breaker).toMatchObject({ change: "closed", breaker: { state: "closed", consecutiveFailures: 0, held: 3, since: t0 + 5100 } });
      // The oldest held is let go a spacing after the probe; the others wait for it to settle.
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 5200 });
      for (const ref of refs.slice(2)) expect(await deliveryOf(ref)).toMatchObject({ state: "held" });
      // A capture arriving during the drain is held behind them.
      const [late] = await append(endpoint, destinationId, 1);
      const order: number[] = [];
      let at = t0 + 5200;
      for (let i = 0; i < 4; i += 1, at += 100) {
        const claims = (await claim("w1", at)).claims;
        expect(claims).toHaveLength(1);
        if (claims[0]!.eventId === late!.id) order.push(99);
        else order.push(indexOf(refs, claims[0]!));
        expect((await claim("w2", at)).claims).toEqual([]);
        await record(claims[0]!, ok(claims[0]!.attempt), worker("w1", "delivered"), at + 5);
      }
      expect(order).toEqual([1, 2, 3, 4]);
      const last = (await claim("w1", Math.max(at, late!.receivedAt + 1))).claims;
      expect(last.map((c) => c.eventId)).toEqual([late!.id]);
      await record(last[0]!, ok(1), worker("w1", "delivered"), at + 200);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "closed", held: 0, holding: false });
    });

    it("drains at the rate limit's pace when the destination has one", async () => {
      const { refs, t0 } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 }, rateLimit: { perSecond: 2 } }, 4);
      // The rate limit spaces the first claims too: 500 ms apart.
      const [a] = (await claim("w1", t0)).claims;
      const [b] = (await claim("w1", t0 + 500)).claims;
      await record(a!, failed(1), worker("w1", "pending", t0 + 10_000), t0 + 501);
      await record(b!, failed(1), worker("w1", "pending", t0 + 10_000), t0 + 502);
      const probe = (await claim("w1", t0 + 5502)).claims[0]!;
      await record(probe, ok(2), worker("w1", "delivered"), t0 + 5600);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 6100 });
      const next = (await claim("w1", t0 + 6100)).claims[0]!;
      await record(next, ok(2), worker("w1", "delivered"), t0 + 6150);
      expect(await deliveryOf(refs[2]!)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 6600 });
    });

    it("counts only network errors, timeouts, 408, 429 and 5xx; an answer resets the count; what never reached it counts nothing", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 3, probeAfterMs: 5000 } }, 6);
      const { claims } = await claim("w1", t0, 6);
      const results = [
        forwardAttemptFixture(1, { status: 0, error: "connection_refused" }),
        forwardAttemptFixture(1, { status: 429 }),
        forwardAttemptFixture(1, { status: 404 }),
        forwardAttemptFixture(1, { status: 0, error: "timeout" }),
        forwardAttemptFixture(1, { status: 0, error: "egress_capacity_exhausted" }),
        forwardAttemptFixture(1, { status: 0, error: "transform_failed" }),
      ];
      const counts: number[] = [];
      for (const [i, c] of claims.entries()) {
        await record(c, results[i]!, worker("w1", results[i]!.status === 404 || results[i]!.error === "transform_failed" ? "failed" : "pending", t0 + 10_000), t0 + i);
        counts.push((await breakerOf(endpoint.id, destinationId))?.consecutiveFailures ?? 0);
      }
      expect(counts).toEqual([1, 2, 0, 1, 1, 1]);
      expect((await breakerOf(endpoint.id, destinationId))?.state ?? "closed").toBe("closed");
      expect(refs).toHaveLength(6);
    });

    it("leaves destinations the endpoint does not have, and attempts outside the outbox, as they were", async () => {
      const { refs, t0, destinationId, endpoint } = await destinationWith({ breaker: { failures: 1, probeAfterMs: 5000 } }, 2);
      // A manual redelivery that fails moves no breaker, and a held delivery it fails stays held.
      const n = (await store().beginForwardAttempt(refs[1]!, TARGET))!;
      await store().recordForwardAttempt(refs[1]!, failed(n, { trigger: "manual" }), { kind: "direct" }, undefined, t0);
      expect(await breakerOf(endpoint.id, destinationId)).toBeUndefined();
      const [c] = (await claim("w1", t0, 1)).claims;
      await record(c!, failed(1), worker("w1", "pending", t0 + 10_000), t0 + 1);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "held" });
      const m = (await store().beginForwardAttempt(refs[1]!, TARGET))!;
      await store().recordForwardAttempt(refs[1]!, failed(m, { trigger: "manual" }), { kind: "direct" }, undefined, t0 + 2);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "held" });
    });
  });

  describe("delivery control: pause (design §18)", () => {
    it("holds a paused destination's deliveries, none sent; resuming drains them oldest first, paced", async () => {
      const { refs, t0, destinationId, endpoint, accountId } = await destinationWith({ paused: true }, 3);
      await store().settleDestinations(endpoint.id, t0);
      for (const ref of refs) expect(await deliveryOf(ref)).toMatchObject({ state: "held" });
      expect((await claim("w1", t0 + 1)).claims).toEqual([]);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ state: "closed", held: 3 });
      // A capture arriving while paused is held when a claim meets it.
      const [late] = await append(endpoint, destinationId, 1);
      expect((await claim("w1", late!.receivedAt)).claims).toEqual([]);
      expect(await deliveryOf({ ...refs[0]!, eventId: late!.id })).toMatchObject({ state: "held" });

      const destinations = JSON.parse(endpoint.forwardJson) as Record<string, unknown>[];
      await store().updateEndpoint(accountId, endpoint.id, { forwardJson: JSON.stringify(destinations.map((d) => ({ ...d, paused: false }))) }, t0 + 100);
      await store().settleDestinations(endpoint.id, t0 + 100);
      // Drained one at a time, oldest first: the next once the one before settled, 100 ms on.
      expect(await deliveryOf(refs[0]!)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 100 });
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "held" });
      const order: string[] = [];
      for (let at = t0 + 100; order.length < 4; at += 100) {
        const [c] = (await claim("w1", at)).claims;
        expect(c, `a delivery due at ${at - t0}`).toBeDefined();
        order.push(c!.eventId);
        await record(c!, ok(c!.attempt), worker("w1", "delivered"), at + 1);
      }
      expect(order).toEqual([...refs.map((r) => r.eventId), late!.id]);
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ held: 0, holding: false });
    });

    it("releases held deliveries at the next claim even when nothing settled the endpoint (a resume whose settle was lost)", async () => {
      const { refs, t0, destinationId, endpoint, accountId } = await destinationWith({ paused: true }, 2);
      expect((await claim("w1", t0)).claims).toEqual([]);
      const destinations = JSON.parse(endpoint.forwardJson) as Record<string, unknown>[];
      await store().updateEndpoint(accountId, endpoint.id, { forwardJson: JSON.stringify(destinations.map((d) => ({ ...d, paused: false }))) }, t0 + 1);
      const { claims } = await claim("w1", t0 + 10);
      expect(claims.map((c) => c.eventId)).toEqual([refs[0]!.eventId]);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "held" });
      await record(claims[0]!, ok(1), worker("w1", "delivered"), t0 + 20);
      expect(await deliveryOf(refs[1]!)).toMatchObject({ state: "pending", nextAttemptAt: t0 + 110 });
      expect(await breakerOf(endpoint.id, destinationId)).toMatchObject({ held: 0 });
    });

    it("releases the held deliveries of a destination the endpoint no longer has, and forgets its breaker", async () => {
      const { refs, t0, destinationId, endpoint, accountId } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 } }, 3);
      await opened(refs, t0);
      const other = { id: randomUUID(), name: "other", url: TARGET, keepPath: false, timeoutMs: 1000, maxAttempts: 6, targetSecretSet: false };
      await store().updateEndpoint(accountId, endpoint.id, { forwardJson: JSON.stringify([other]) }, t0 + 10);
      await store().settleDestinations(endpoint.id, t0 + 10);
      for (const ref of refs) expect(await deliveryOf(ref)).toMatchObject({ state: "pending" });
      expect(await breakerOf(endpoint.id, destinationId)).toBeUndefined();
    });

    it("shows breakers not closed or holding in activeBreakers, and drops an endpoint's with it", async () => {
      const { refs, t0, destinationId, endpoint, accountId } = await destinationWith({ breaker: { failures: 2, probeAfterMs: 5000 } }, 2);
      await opened(refs, t0);
      expect((await store().activeBreakers()).find((b) => b.destinationId === destinationId)).toMatchObject({ state: "open", held: 2, endpointId: endpoint.id });
      await store().deleteEndpoint(accountId, endpoint.id);
      expect((await store().activeBreakers()).find((b) => b.destinationId === destinationId)).toBeUndefined();
    });
  });
}
