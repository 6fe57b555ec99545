import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import type { DeliveryState } from "@whc/api-model";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";
import type { CatalogStore } from "../ports.js";
import type { EndpointRecord, NewRedeliveryJob, RedeliveryFilter, RedeliveryJobRecord, RedeliveryLimits, Stamp } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { auditFixture, eventFixture, forwardAttemptFixture } from "./fixtures.js";

/** Destinations of the relay endpoints here (design §17). */
const A = "0190b000-0000-7000-8000-00000000000a";
const B = "0190b000-0000-7000-8000-00000000000b";
const GONE = "0190b000-0000-7000-8000-0000000000ff";
const KEY_ID = "01a20000-0000-7000-8000-0000000000c1";
/** Far after every capture of a test: everything scheduled is due. */
const LATER = 4_000_000_000_000;
const LEASE_MS = 30_000;
const CLAIM_MS = 30_000;
const LIMITS: RedeliveryLimits = { runningPerAccount: 3, deliveriesPerJob: 100_000 };

const destinationsJson = (...ids: string[]) => JSON.stringify(ids.map((id, i) => ({ id, name: `d${i}`, url: `https://app.example.test/${i}` })));
const worker = (owner: string, state: DeliveryState, nextAttemptAt?: number): AttemptTransition => ({ kind: "worker", owner, state, nextAttemptAt });

const isQuota = (quota: string) => (e: unknown) => AppError.is(e) && e.reason === "quota_exceeded" && e.meta.quota === quota;
const isReason = (reason: string) => (e: unknown) => AppError.is(e) && e.reason === reason;

/**
 * Bulk redelivery (design §18; ADR 0089): the count a dry run makes and a job's pages select
 * the same deliveries; a page puts them back and moves the cursor together; a lease gives a
 * job to one runner; a tagged delivery counts into its job as it ends.
 */
export function redeliveryContract(ctx: ContractContext): void {
  const store = (): CatalogStore => ctx.store();

  /** A relay endpoint with destinations A and B, and `n` captures each delivered to `to`. */
  async function relayWith(n: number, to: readonly string[] = [A, B], extra: Partial<EndpointRecord> = {}) {
    const { accountId, endpoint } = await ctx.accountWithEndpoint(undefined, { operatingMode: "relay", forwardJson: destinationsJson(A, B), ...extra });
    const deliveries = to.map((destinationId) => ({ destinationId, target: `https://app.example.test/${destinationId.slice(-1)}` }));
    const stamps = (await store().appendEvents(
      Array.from({ length: n }, (_, i) => eventFixture(endpoint, { canonicalEventType: i % 2 === 0 ? "invoice.paid" : "invoice.failed", forward: { scheduled: true, deliveries } })),
      ctx.clock(),
    )) as Stamp[];
    const events: EventRef[] = stamps.map((s) => ({ accountId, endpointId: endpoint.id, eventId: s.id }));
    return { accountId, endpoint, events };
  }

  /** Claims every due delivery and records each with the state `stateOf` gives it (default delivered). */
  async function settleAll(stateOf: (ref: DeliveryRef) => DeliveryState = () => "delivered", now = LATER) {
    for (;;) {
      const claims = (await store().claimDeliveries("settler", now, CLAIM_MS, 100)).claims;
      if (claims.length === 0) return;
      for (const c of claims) {
        const state = stateOf(c);
        await store().recordForwardAttempt(c, forwardAttemptFixture(c.attempt, { status: state === "delivered" ? 200 : 500 }), worker("settler", state));
      }
    }
  }

  const newJob = (accountId: string, endpointId: string, filter: RedeliveryFilter = {}): NewRedeliveryJob => ({
    id: newId(),
    accountId,
    endpointId,
    filter,
    createdAt: LATER,
    createdByKeyId: KEY_ID,
    createdByKeyPrefix: "whc_abcdef",
  });
  const start = (accountId: string, endpointId: string, filter: RedeliveryFilter = {}, limits = LIMITS) =>
    store().createRedeliveryJob(newJob(accountId, endpointId, filter), limits);
  const stateOf = async (ref: EventRef, destinationId: string) =>
    (await store().getEvent(ref.accountId, ref.endpointId, ref.eventId))?.deliveries.find((d) => d.destinationId === destinationId);

  /** Runs the job's walk to its end as `owner`, `limit` events a page; answers the job. */
  async function walkAll(job: RedeliveryJobRecord, owner = "runner", limit = 100, now = LATER + 1): Promise<RedeliveryJobRecord> {
    expect((await store().claimRedeliveryJob(owner, now, LEASE_MS))?.id).toBe(job.id);
    let current: RedeliveryJobRecord | undefined = job;
    for (let i = 0; i < 100 && current && current.state === "running" && !current.walked; i++) current = await store().runRedeliveryPage(job.id, owner, now, limit, LEASE_MS);
    return current!;
  }

  describe("bulk redelivery: what a job redoes", () => {
    it("counts the ended deliveries of the filter's events to the endpoint's destinations, as a job's total", async () => {
      const { accountId, endpoint, events } = await relayWith(4);
      // Event 0: both delivered; 1: A failed, B exhausted; 2: A delivered, B pending (a retry); 3: both pending.
      const plan: Record<number, Record<string, DeliveryState>> = { 0: { [A]: "delivered", [B]: "delivered" }, 1: { [A]: "failed", [B]: "exhausted" }, 2: { [A]: "delivered", [B]: "pending" } };
      const index = new Map(events.map((e, i) => [e.eventId, i]));
      const claims = (await store().claimDeliveries("settler", LATER, CLAIM_MS, 100)).claims;
      for (const c of claims) {
        const state = plan[index.get(c.eventId)!]?.[c.destinationId];
        if (!state) continue;
        await store().recordForwardAttempt(
          c,
          forwardAttemptFixture(c.attempt, { status: state === "delivered" ? 200 : 500 }),
          worker("settler", state, state === "pending" ? LATER + 1_000_000 : undefined),
        );
      }
      const count = (filter: RedeliveryFilter) => store().countRedeliveries(accountId, endpoint.id, filter);
      expect(await count({})).toBe(5);
      expect(await count({ destinationId: A })).toBe(3);
      expect(await count({ destinationId: B })).toBe(2);
      expect(await count({ eventType: "invoice.failed" })).toBe(2);
      expect(await count({ forwardState: "exhausted" })).toBe(2);
      expect(await count({ forwardState: "pending" })).toBe(1);
      expect(await count({ forwardState: "none" })).toBe(0);
      const job = await start(accountId, endpoint.id);
      expect(job).toMatchObject({ state: "running", total: 5, queued: 0, done: 0, failed: 0, walked: false, cursor: undefined, until: { id: events[3]!.eventId } });
      expect(await store().getRedeliveryJob(accountId, endpoint.id, job.id)).toEqual(job);
    });

    it("refuses a count or a job on an endpoint without the destinations it redoes, and on another account's endpoint", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const relay = await relayWith(1);
      await expect(store().countRedeliveries(accountId, endpoint.id, {})).rejects.toSatisfy(isReason("forward_not_configured"));
      await expect(start(accountId, endpoint.id)).rejects.toSatisfy(isReason("forward_not_configured"));
      await expect(store().countRedeliveries(relay.accountId, relay.endpoint.id, { destinationId: GONE })).rejects.toSatisfy(isReason("forward_not_configured"));
      await expect(store().countRedeliveries(accountId, relay.endpoint.id, {})).rejects.toSatisfy(isReason("not_found"));
      await expect(start(accountId, relay.endpoint.id)).rejects.toSatisfy(isReason("not_found"));
      expect(await store().listRedeliveryJobs(relay.accountId, relay.endpoint.id, 10)).toEqual([]);
    });

    it("starts a job with nothing to redo as done, and writes the entry with its total", async () => {
      const { accountId, endpoint } = await relayWith(2);
      const audit = auditFixture(accountId, { action: "redelivery.started", endpointId: endpoint.id, details: { filter: { eventType: "x" } } });
      const job = await store().createRedeliveryJob(newJob(accountId, endpoint.id, { eventType: "x" }), LIMITS, audit);
      expect(job).toMatchObject({ state: "done", total: 0, walked: true, finishedAt: LATER });
      const entries = await store().listAudit({ accountId, limit: 10 });
      expect(entries.entries.map((e) => [e.action, e.details])).toEqual([["redelivery.started", { filter: { eventType: "x" }, total: 0 }]]);
      expect(await store().claimRedeliveryJob("runner", LATER + 1, LEASE_MS)).toBeUndefined();
    });
  });

  describe("bulk redelivery: the walk", () => {
    it("puts each page's deliveries back in the outbox tagged with the job and moves the cursor with them; pending ones are left alone", async () => {
      const { accountId, endpoint, events } = await relayWith(5, [A]);
      await settleAll((ref) => (ref.eventId === events[1]!.eventId ? "exhausted" : "delivered"));
      const job = await start(accountId, endpoint.id);
      expect(job.total).toBe(5);
      expect((await store().claimRedeliveryJob("runner", LATER + 1, LEASE_MS))?.id).toBe(job.id);
      const first = await store().runRedeliveryPage(job.id, "runner", LATER + 1, 2, LEASE_MS);
      expect(first).toMatchObject({ state: "running", queued: 2, walked: false, cursor: { id: events[1]!.eventId }, leaseOwner: "runner", leaseUntil: LATER + 1 + LEASE_MS });
      expect(await stateOf(events[0]!, A)).toMatchObject({ state: "pending", nextAttemptAt: LATER + 1 });
      expect(await stateOf(events[2]!, A)).toMatchObject({ state: "delivered" });
      // The aggregate moved with the page: the list shows them pending.
      const listed = await store().listEvents({ accountId, endpointId: endpoint.id, forwardState: "pending", limit: 10 });
      expect(listed.events.map((e) => e.id).sort()).toEqual([events[0]!.eventId, events[1]!.eventId].sort());
      // Their claims carry the job and the attempts made before it: a fresh budget.
      const claims = (await store().claimDeliveries("w", LATER + 1, CLAIM_MS, 10)).claims;
      expect(claims.map((c) => [c.eventId, c.attempt, c.bulkJobId, c.attemptBase])).toEqual([
        [events[0]!.eventId, 2, job.id, 1],
        [events[1]!.eventId, 2, job.id, 1],
      ]);
      const rest = await store().runRedeliveryPage(job.id, "runner", LATER + 2, 10, LEASE_MS);
      expect(rest).toMatchObject({ queued: 5, total: 5, walked: true, cursor: { id: events[4]!.eventId } });
      // Every one waits in the outbox now: a second job would redo none of them (nothing is doubled).
      expect(await store().countRedeliveries(accountId, endpoint.id, {})).toBe(0);
      await expect(start(accountId, endpoint.id)).resolves.toMatchObject({ state: "done", total: 0 });
    });

    it("walks only to the endpoint's newest event when the job started", async () => {
      const { accountId, endpoint, events } = await relayWith(2, [A]);
      await settleAll();
      const job = await start(accountId, endpoint.id);
      const later = (await store().appendEvents([eventFixture(endpoint, { forward: { scheduled: true, deliveries: [{ destinationId: A, target: "https://app.example.test/a" }] } })], ctx.clock())) as Stamp[];
      await settleAll();
      const walked = await walkAll(job);
      expect(walked).toMatchObject({ queued: 2, total: 2, walked: true, cursor: { id: events[1]!.eventId } });
      expect((await stateOf({ accountId, endpointId: endpoint.id, eventId: later[0]!.id }, A))?.state).toBe("delivered");
    });

    it("redoes only the filter's destination's deliveries of an event", async () => {
      const { accountId, endpoint, events } = await relayWith(2);
      await settleAll();
      const job = await start(accountId, endpoint.id, { destinationId: B });
      expect(job.total).toBe(2);
      await walkAll(job);
      expect((await stateOf(events[0]!, A))?.state).toBe("delivered");
      expect((await stateOf(events[0]!, B))?.state).toBe("pending");
    });

    it("gives a job to one runner at a time; another continues from the stored cursor once the lease ends", async () => {
      const { accountId, endpoint, events } = await relayWith(4, [A]);
      await settleAll();
      const job = await start(accountId, endpoint.id);
      expect((await store().claimRedeliveryJob("one", LATER + 1, LEASE_MS))?.id).toBe(job.id);
      expect(await store().claimRedeliveryJob("two", LATER + 2, LEASE_MS)).toBeUndefined();
      expect(await store().runRedeliveryPage(job.id, "one", LATER + 3, 1, LEASE_MS)).toMatchObject({ queued: 1, cursor: { id: events[0]!.eventId } });
      // Not the lease's owner: nothing walked.
      expect(await store().runRedeliveryPage(job.id, "two", LATER + 4, 10, LEASE_MS)).toBeUndefined();
      expect(await store().releaseRedeliveryJob(job.id, "two", LATER + 4)).toBe(false);
      // "one" is killed here. Its lease ends; "two" takes the job from its cursor: nothing walked twice.
      if (ctx.reopen) await ctx.reopen();
      expect(await store().claimRedeliveryJob("two", LATER + 3 + LEASE_MS - 1, LEASE_MS)).toBeUndefined();
      expect((await store().claimRedeliveryJob("two", LATER + 3 + LEASE_MS, LEASE_MS))?.cursor).toEqual({ receivedAt: expect.any(Number), id: events[0]!.eventId });
      expect(await store().runRedeliveryPage(job.id, "one", LATER + 3 + LEASE_MS, 10, LEASE_MS)).toBeUndefined();
      const after = await store().runRedeliveryPage(job.id, "two", LATER + 3 + LEASE_MS, 10, LEASE_MS);
      expect(after).toMatchObject({ queued: 4, total: 4, walked: true });
      const claims = (await store().claimDeliveries("w", LATER + 3 + LEASE_MS, CLAIM_MS, 10)).claims;
      expect(claims.map((c) => c.eventId)).toEqual(events.map((e) => e.eventId));
      expect(claims.every((c) => c.attempt === 2 && c.bulkJobId === job.id && c.attemptBase === 1)).toBe(true);
      // Released for later: claimable again then, by anyone.
      expect(await store().releaseRedeliveryJob(job.id, "two", LATER + 5 + LEASE_MS)).toBe(true);
      expect(await store().claimRedeliveryJob("three", LATER + 4 + LEASE_MS, LEASE_MS)).toBeUndefined();
      expect((await store().claimRedeliveryJob("three", LATER + 5 + LEASE_MS, LEASE_MS))?.id).toBe(job.id);
    });

    it("fails a job whose endpoint lost the destinations it redoes", async () => {
      const { accountId, endpoint } = await relayWith(3, [A]);
      await settleAll();
      const job = await start(accountId, endpoint.id, { destinationId: A });
      await store().updateEndpoint(accountId, endpoint.id, { forwardJson: destinationsJson(B) }, LATER);
      expect((await store().claimRedeliveryJob("runner", LATER + 1, LEASE_MS))?.id).toBe(job.id);
      expect(await store().runRedeliveryPage(job.id, "runner", LATER + 1, 10, LEASE_MS)).toMatchObject({ state: "failed", queued: 0, total: 0, finishedAt: LATER + 1 });
    });
  });

  describe("bulk redelivery: counting and ending", () => {
    it("counts each delivery as it ends, delivered or failed, and is done when all ended", async () => {
      const { accountId, endpoint, events } = await relayWith(3, [A]);
      await settleAll();
      const job = await walkAll(await start(accountId, endpoint.id));
      expect(job).toMatchObject({ state: "running", queued: 3, walked: true });
      const claims = (await store().claimDeliveries("w", LATER + 2, CLAIM_MS, 10)).claims;
      const [c0, c1, c2] = claims;
      await store().recordForwardAttempt(c0!, forwardAttemptFixture(c0!.attempt, { trigger: "bulk", status: 200 }), worker("w", "delivered"));
      // A retry is not an end.
      await store().recordForwardAttempt(c1!, forwardAttemptFixture(c1!.attempt, { trigger: "bulk" }), worker("w", "pending", LATER + 3));
      await store().recordForwardAttempt(c2!, forwardAttemptFixture(c2!.attempt, { trigger: "bulk", status: 404 }), worker("w", "failed"));
      // The same record again (a retried call) counts nothing more.
      await store().recordForwardAttempt(c0!, forwardAttemptFixture(c0!.attempt, { trigger: "bulk", status: 200 }), worker("w", "delivered"));
      expect(await store().getRedeliveryJob(accountId, endpoint.id, job.id)).toMatchObject({ state: "running", done: 1, failed: 1 });
      const [retry] = (await store().claimDeliveries("w", LATER + 3, CLAIM_MS, 10)).claims;
      expect([retry!.eventId, retry!.attempt, retry!.bulkJobId, retry!.attemptBase]).toEqual([events[1]!.eventId, 3, job.id, 1]);
      await store().recordForwardAttempt(retry!, forwardAttemptFixture(retry!.attempt, { trigger: "bulk" }), worker("w", "exhausted"));
      const done = await store().getRedeliveryJob(accountId, endpoint.id, job.id);
      expect(done).toMatchObject({ state: "done", total: 3, queued: 3, done: 1, failed: 2, leaseOwner: undefined });
      expect(done!.finishedAt).toBeGreaterThan(0);
      expect(await store().claimRedeliveryJob("runner", LATER + 10, LEASE_MS)).toBeUndefined();
      // A second job redoes them again (the first's counts stay as they were).
      const again = await start(accountId, endpoint.id);
      expect(again.total).toBe(3);
    });

    it("settles a walked job whose open deliveries are gone (their events deleted) as done", async () => {
      const { accountId, endpoint, events } = await relayWith(2, [A]);
      await settleAll();
      const job = await walkAll(await start(accountId, endpoint.id));
      expect(job).toMatchObject({ state: "running", walked: true, queued: 2 });
      for (const e of events) await store().deleteEvent(accountId, endpoint.id, e.eventId);
      expect(await store().runRedeliveryPage(job.id, "runner", LATER + 5, 0, LEASE_MS)).toMatchObject({ state: "done", done: 0, failed: 0, total: 2 });
    });

    it("cancels a running job: its walk stops where it is and the entry says how many it put back", async () => {
      const { accountId, endpoint, events } = await relayWith(3, [A]);
      await settleAll();
      const job = await start(accountId, endpoint.id);
      await store().claimRedeliveryJob("runner", LATER + 1, LEASE_MS);
      await store().runRedeliveryPage(job.id, "runner", LATER + 1, 1, LEASE_MS);
      const audit = auditFixture(accountId, { action: "redelivery.canceled", endpointId: endpoint.id, details: { jobId: job.id } });
      const canceled = await store().cancelRedeliveryJob(accountId, endpoint.id, job.id, LATER + 2, audit);
      expect(canceled).toMatchObject({ state: "canceled", queued: 1, total: 1, finishedAt: LATER + 2 });
      expect(await store().runRedeliveryPage(job.id, "runner", LATER + 3, 10, LEASE_MS)).toBeUndefined();
      expect((await stateOf(events[1]!, A))?.state).toBe("delivered");
      // A second cancel changes nothing and writes nothing.
      expect(await store().cancelRedeliveryJob(accountId, endpoint.id, job.id, LATER + 4, auditFixture(accountId, { action: "redelivery.canceled" }))).toMatchObject({ state: "canceled", finishedAt: LATER + 2 });
      const entries = (await store().listAudit({ accountId, limit: 10 })).entries;
      expect(entries.map((e) => [e.action, e.details])).toEqual([["redelivery.canceled", { jobId: job.id, queued: 1 }]]);
      // The delivery it put back still counts as it ends.
      const [claim] = (await store().claimDeliveries("w", LATER + 5, CLAIM_MS, 10)).claims;
      await store().recordForwardAttempt(claim!, forwardAttemptFixture(claim!.attempt, { trigger: "bulk", status: 200 }), worker("w", "delivered"));
      expect(await store().getRedeliveryJob(accountId, endpoint.id, job.id)).toMatchObject({ state: "canceled", done: 1 });
      expect(await store().cancelRedeliveryJob(accountId, endpoint.id, newId(), LATER)).toBeUndefined();
    });
  });

  describe("bulk redelivery: limits, reads, removal", () => {
    it("refuses a job past the account's running jobs, and one that takes too many deliveries", async () => {
      const { accountId, endpoint } = await relayWith(3, [A]);
      await settleAll();
      const limits = { runningPerAccount: 2, deliveriesPerJob: 3 };
      await start(accountId, endpoint.id, {}, limits);
      const second = await start(accountId, endpoint.id, {}, limits);
      await expect(start(accountId, endpoint.id, {}, limits)).rejects.toSatisfy(isQuota("redelivery_jobs"));
      await store().cancelRedeliveryJob(accountId, endpoint.id, second.id, LATER);
      await expect(start(accountId, endpoint.id, {}, { ...limits, deliveriesPerJob: 2 })).rejects.toSatisfy(isQuota("redelivery_deliveries"));
      await expect(start(accountId, endpoint.id, {}, limits)).resolves.toMatchObject({ total: 3 });
    });

    it("lists an endpoint's jobs newest first, to its account only; deleting the endpoint deletes them; finished ones are purged", async () => {
      const { accountId, endpoint } = await relayWith(1, [A]);
      const other = await relayWith(1, [A]);
      const first = await store().createRedeliveryJob({ ...newJob(accountId, endpoint.id), createdAt: LATER }, LIMITS);
      const second = await store().createRedeliveryJob({ ...newJob(accountId, endpoint.id), createdAt: LATER + 1 }, LIMITS);
      expect((await store().listRedeliveryJobs(accountId, endpoint.id, 10)).map((j) => j.id)).toEqual([second.id, first.id]);
      expect((await store().listRedeliveryJobs(accountId, endpoint.id, 1)).map((j) => j.id)).toEqual([second.id]);
      expect(await store().listRedeliveryJobs(other.accountId, endpoint.id, 10)).toEqual([]);
      expect(await store().getRedeliveryJob(other.accountId, endpoint.id, first.id)).toBeUndefined();
      expect(await store().getRedeliveryJob(accountId, other.endpoint.id, first.id)).toBeUndefined();
      // Nothing was delivered yet (the captures are pending): both jobs are done at once, finished at their start.
      expect(first.state).toBe("done");
      expect(await store().purgeRedeliveryJobs(LATER + 1)).toBeGreaterThanOrEqual(1);
      expect((await store().listRedeliveryJobs(accountId, endpoint.id, 10)).map((j) => j.id)).toEqual([second.id]);
      await store().deleteEndpoint(accountId, endpoint.id);
      expect(await store().getRedeliveryJob(accountId, endpoint.id, second.id)).toBeUndefined();
    });
  });
}
