import { describe, it, expect } from "vitest";
import type { CatalogStore } from "../ports.js";
import type { EndpointRecord, AttemptRecord, DeliveryRecord, NewEvent, Stamp } from "../types.js";
import type { Clock } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { eventFixture, forwardAttemptFixture, token } from "./fixtures.js";
import type { DeliveryState } from "@whc/api-model";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";

const TARGET = "https://app.example.test/hooks";
const CLAIM_MS = 30_000;
/** Far after every capture of a test: everything scheduled is due. */
const LATER = 4_000_000_000_000;
/** Destinations of a relay endpoint (design §17): a capture's deliveries go to those it matched. */
const A = "0190a000-0000-7000-8000-00000000000a";
const B = "0190a000-0000-7000-8000-00000000000b";
const C = "0190a000-0000-7000-8000-00000000000c";

const direct: AttemptTransition = { kind: "direct" };
const worker = (owner: string, state: DeliveryState, nextAttemptAt?: number): AttemptTransition => ({ kind: "worker", owner, state, nextAttemptAt });

/** An attempt with its bytes as plain arrays: stores hand back Uint8Array, Buffer or a view. */
function plainAttempt(a: AttemptRecord) {
  const { body, ...rest } = a;
  return { ...rest, body: body && { ciphertext: [...body.ciphertext], wrappedKey: [...body.wrappedKey], keyId: body.keyId } };
}

function plainForward(f: DeliveryRecord | undefined) {
  return f && { ...f, attempts: f.attempts.map(plainAttempt) };
}

type Mode = "relay" | "proxy" | "capture";

function captureOf(endpoint: Pick<EndpointRecord, "id" | "accountId">, mode: Mode, destinations: readonly string[] = [A]): NewEvent {
  if (mode === "capture") return eventFixture(endpoint);
  const deliveries = destinations.map((destinationId) => ({ destinationId, target: `${TARGET}/${destinationId.slice(-1)}` }));
  return eventFixture(endpoint, { forward: { scheduled: mode === "relay", deliveries } });
}

/** Where destination `d`'s deliveries go in these tests. */
const targetOf = (d: string) => `${TARGET}/${d.slice(-1)}`;

/** The forwarding store: the relay outbox, attempt numbers, transitions and attempts, per destination. */
export function forwardingContract(ctx: ContractContext): void {
  const store = (): CatalogStore => ctx.store();

  /** Appends captures of one endpoint in order; answers their refs (to destination A) and stamps. */
  async function capturesStamped(clock: Clock, ...modes: Mode[]) {
    const { accountId, endpoint } = await ctx.accountWithEndpoint();
    const stamps = (await store().appendEvents(modes.map((m) => captureOf(endpoint, m)), clock)) as Stamp[];
    const refs: DeliveryRef[] = stamps.map((s) => ({ accountId, endpointId: endpoint.id, eventId: s.id, destinationId: A }));
    return { accountId, endpoint, refs, stamps };
  }
  const captures = (...modes: Mode[]) => capturesStamped(ctx.clock(), ...modes);

  /** One relay capture matched by each destination given. */
  async function fannedOut(...destinations: string[]) {
    const { accountId, endpoint } = await ctx.accountWithEndpoint();
    const [stamp] = (await store().appendEvents([captureOf(endpoint, "relay", destinations)], ctx.clock())) as Stamp[];
    const event: EventRef = { accountId, endpointId: endpoint.id, eventId: stamp!.id };
    return { accountId, endpoint, event, t0: stamp!.receivedAt, to: (destinationId: string): DeliveryRef => ({ ...event, destinationId }) };
  }

  const deliveriesOf = async (ref: EventRef) => (await store().getEvent(ref.accountId, ref.endpointId, ref.eventId))?.deliveries;
  const forwardOf = async (ref: DeliveryRef) => (await deliveriesOf(ref))?.find((d) => d.destinationId === ref.destinationId);
  const claim = async (owner: string, now: number, limit = 10, claimMs = CLAIM_MS) => (await store().claimDeliveries(owner, now, claimMs, limit)).claims;
  const record = async (ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition) =>
    (await store().recordForwardAttempt(ref, attempt, transition))?.delivery;
  const summaryState = async (ref: EventRef) =>
    (await store().listEvents({ accountId: ref.accountId, endpointId: ref.endpointId, limit: 50 })).events.find((e) => e.id === ref.eventId)?.forwardState;

  describe("forwarding: the relay outbox", () => {
    it("puts a relay capture in the outbox at once; a claim takes attempt 1, and 2 once the claim expired", async () => {
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      expect(await forwardOf(ref)).toEqual({ destinationId: A, state: "pending", target: targetOf(A), nextAttemptAt: t0, attempts: [] });
      expect(await claim("w1", t0 - 1)).toEqual([]);
      expect(await claim("w1", t0)).toEqual([{ ...ref, attempt: 1 }]);
      expect(await claim("w2", t0 + CLAIM_MS - 1)).toEqual([]);
      expect(await claim("w2", t0 + CLAIM_MS)).toEqual([{ ...ref, attempt: 2 }]);
      expect(await claim("w1", t0 + CLAIM_MS + 1)).toEqual([]);
      expect(await forwardOf(ref)).toEqual({ destinationId: A, state: "pending", target: targetOf(A), nextAttemptAt: t0, attempts: [] });
    });

    it("claims the oldest due first, up to the limit, each once; never captures or proxy deliveries", async () => {
      const { refs } = await captures("relay", "capture", "relay", "proxy", "relay", "relay", "relay");
      const relayed = [0, 2, 4, 5, 6].map((i) => refs[i]!);
      const first = await claim("w1", LATER, 2);
      const rest = await claim("w2", LATER, 10);
      expect(first).toEqual(relayed.slice(0, 2).map((r) => ({ ...r, attempt: 1 })));
      expect(rest).toEqual(relayed.slice(2).map((r) => ({ ...r, attempt: 1 })));
      expect(await claim("w3", LATER, 10)).toEqual([]);
    });

    it("reschedules a retry: not due before its time, then the next attempt number", async () => {
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      await claim("w1", t0);
      const after = await record(ref, forwardAttemptFixture(1), worker("w1", "pending", t0 + 5000));
      expect(plainForward(after)).toEqual({
        destinationId: A,
        state: "pending",
        target: targetOf(A),
        nextAttemptAt: t0 + 5000,
        attempts: [plainAttempt(forwardAttemptFixture(1))],
      });
      expect(await claim("w2", t0 + 4999)).toEqual([]);
      expect(await claim("w2", t0 + 5000)).toEqual([{ ...ref, attempt: 2 }]);
    });

    it("takes delivered, failed, exhausted and skipped deliveries out of the outbox", async () => {
      const { refs } = await captures("relay", "relay", "relay", "relay");
      expect((await claim("w1", LATER)).map((c) => c.attempt)).toEqual([1, 1, 1, 1]);
      const outcomes: [DeliveryState, number][] = [
        ["delivered", 200],
        ["failed", 404],
        ["exhausted", 503],
        ["skipped", 0],
      ];
      for (const [i, [state, status]] of outcomes.entries()) {
        const after = await record(refs[i]!, forwardAttemptFixture(1, { status }), worker("w1", state));
        expect(after).toMatchObject({ state, nextAttemptAt: undefined });
        expect((await forwardOf(refs[i]!))?.state).toBe(state);
      }
      expect(await store().outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
      expect(await claim("w2", LATER + CLAIM_MS)).toEqual([]);
    });

    it("records a lost claim's attempt without moving the state the newer claim holds", async () => {
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      expect(await claim("w1", t0)).toEqual([{ ...ref, attempt: 1 }]);
      expect(await claim("w2", t0 + CLAIM_MS)).toEqual([{ ...ref, attempt: 2 }]);
      const late = await record(ref, forwardAttemptFixture(1), worker("w1", "exhausted"));
      expect(late).toMatchObject({ state: "pending", nextAttemptAt: t0 });
      expect(late?.attempts.map((a) => a.n)).toEqual([1]);
      // w2 still holds it: nobody else may claim it until its claim expires.
      expect(await claim("w3", t0 + CLAIM_MS + 1)).toEqual([]);
      const done = await record(ref, forwardAttemptFixture(2, { status: 200 }), worker("w2", "delivered"));
      expect(done).toMatchObject({ state: "delivered", nextAttemptAt: undefined });
      expect(done?.attempts.map((a) => a.n)).toEqual([1, 2]);
    });

    it("lets no claim of an older number move the state, even the same owner's", async () => {
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      await claim("w1", t0);
      expect(await claim("w1", t0 + CLAIM_MS)).toEqual([{ ...ref, attempt: 2 }]);
      expect(await record(ref, forwardAttemptFixture(1), worker("w1", "failed"))).toMatchObject({ state: "pending" });
      expect(await record(ref, forwardAttemptFixture(2), worker("w1", "failed"))).toMatchObject({ state: "failed" });
    });

    it("gives each attempt number once under concurrent claims and direct attempts", async () => {
      const { refs } = await captures(...Array.from({ length: 20 }, (): Mode => "relay"));
      const claims = (await Promise.all(Array.from({ length: 8 }, (_, i) => claim(`w${i}`, LATER, 5)))).flat();
      expect(claims.map((c) => c.eventId).sort()).toEqual(refs.map((r) => r.eventId).sort());
      expect(new Set(claims.map((c) => c.attempt))).toEqual(new Set([1]));

      const [ref] = refs;
      const numbers = await Promise.all([
        ...Array.from({ length: 10 }, () => store().beginForwardAttempt(ref!, TARGET)),
        claim("w9", LATER + CLAIM_MS).then((c) => c.find((x) => x.eventId === ref!.eventId)?.attempt),
      ]);
      expect(numbers.sort((a, b) => a! - b!)).toEqual(Array.from({ length: 11 }, (_, i) => i + 2));
    });

    it("keeps a pending delivery and its attempt counter across a restart", async (test) => {
      if (!ctx.reopen) return test.skip();
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      expect(await claim("w1", t0)).toEqual([{ ...ref, attempt: 1 }]);
      await ctx.reopen();
      expect(await claim("w2", t0 + 1)).toEqual([]);
      expect(await claim("w2", t0 + CLAIM_MS)).toEqual([{ ...ref, attempt: 2 }]);
      expect(await record(ref, forwardAttemptFixture(2, { status: 200 }), worker("w2", "delivered"))).toMatchObject({ state: "delivered" });
    });

    it("records attempts asked for at once each as if alone: two of one delivery, others, and one for an event that is gone", async () => {
      const { refs } = await captures("relay", "relay", "relay", "relay");
      const claims = await claim("w1", LATER, 10);
      expect(claims).toHaveLength(4);
      const [a, b, c, d] = refs as [DeliveryRef, DeliveryRef, DeliveryRef, DeliveryRef];
      const gone = { ...a, eventId: "00000000-0000-7000-8000-000000000000" };
      const results = await Promise.all([
        store().recordForwardAttempt(a, forwardAttemptFixture(1, { status: 200 }), worker("w1", "delivered")),
        store().recordForwardAttempt(b, forwardAttemptFixture(1), worker("w1", "pending", LATER + 5000)),
        store().recordForwardAttempt(gone, forwardAttemptFixture(1), direct),
        store().recordForwardAttempt(c, forwardAttemptFixture(1, { status: 404 }), worker("w1", "failed")),
        // A direct attempt on b while the worker's is recorded: both kept, b's state the worker's.
        store().recordForwardAttempt(b, forwardAttemptFixture(2, { trigger: "manual", status: 500 }), direct),
      ]);
      expect(results.map((r) => r?.delivery.state)).toEqual(["delivered", "pending", undefined, "failed", "pending"]);
      expect(results[4]?.delivery.attempts.map((x) => x.n)).toEqual([1, 2]);
      expect((await forwardOf(a))?.state).toBe("delivered");
      expect(await forwardOf(b)).toMatchObject({ state: "pending", nextAttemptAt: LATER + 5000 });
      expect((await forwardOf(b))?.attempts.map((x) => x.n)).toEqual([1, 2]);
      expect((await forwardOf(c))?.state).toBe("failed");
      expect(await forwardOf(d)).toMatchObject({ state: "pending", attempts: [] });
      expect(await claim("w2", LATER + 5000)).toEqual([{ ...b, attempt: 3 }]);
    });

    it("begins, records and proxy answers asked for at once each as if alone, in the order asked", async () => {
      const { refs } = await captures("proxy", "proxy", "proxy");
      const [p, q, r] = refs as [DeliveryRef, DeliveryRef, DeliveryRef];
      const gone = { ...p, eventId: "00000000-0000-7000-8000-000000000000" };
      const asked = await Promise.all([
        store().beginForwardAttempt(p, TARGET),
        store().beginForwardAttempt(q, TARGET),
        store().beginForwardAttempt(gone, TARGET),
        store().recordForwardAttempt(p, forwardAttemptFixture(1, { trigger: "initial", status: 201 }), direct),
        store().beginForwardAttempt(p, TARGET),
        store().recordProxyAnswer(p, 201, false),
        store().recordProxyAnswer(gone, 200, false),
        store().recordProxyAnswer(r, 504, true),
      ]);
      // A proxy capture's attempt 1 was begun by its append (ADR 0098).
      expect(asked[0]).toBe(2);
      expect(asked[1]).toBe(2);
      expect(asked[2]).toBeUndefined();
      expect((asked[3] as { delivery: DeliveryRecord } | undefined)?.delivery).toMatchObject({ state: "delivered", attempts: [{ n: 1, status: 201 }] });
      expect(asked[4]).toBe(3);
      expect(asked.slice(5)).toEqual([true, false, true]);
      expect(await forwardOf(p)).toMatchObject({ state: "delivered", attempts: [{ n: 1 }] });
      expect(await forwardOf(q)).toMatchObject({ state: "pending", attempts: [] });
      const event = async (ref: EventRef) => (await store().getEvent(ref.accountId, ref.endpointId, ref.eventId))!;
      expect((await event(p)).responseCode).toBe(201);
      expect((await event(r)).responseCode).toBe(504);
    });

    it("answers when a delivery can next be claimed: its due time, or its claim's end; none once settled", async () => {
      expect(await store().nextDueAt(0)).toBeUndefined();
      const { refs, stamps } = await captures("relay", "capture", "relay");
      const [t0, t2] = [stamps[0]!.receivedAt, stamps[2]!.receivedAt];
      expect(await store().nextDueAt(t0 - 1)).toBe(t0);
      expect(await claim("w1", t2)).toHaveLength(2);
      // Both claimed: claimable again when the claims end, if their attempts are not recorded by then.
      expect(await store().nextDueAt(t0 - 1)).toBe(t2 + CLAIM_MS);
      expect(await store().nextDueAt(t2 + CLAIM_MS)).toBeUndefined();
      await record(refs[0]!, forwardAttemptFixture(1), worker("w1", "pending", LATER));
      await record(refs[2]!, forwardAttemptFixture(1, { status: 200 }), worker("w1", "delivered"));
      expect(await store().nextDueAt(t2)).toBe(LATER);
      expect(await store().nextDueAt(LATER)).toBeUndefined();
    });

    it("counts the outbox's deliveries and its oldest due time, claimed or not", async () => {
      expect(await store().outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
      const { refs, stamps } = await captures("relay", "relay", "proxy", "relay", "capture");
      expect(await store().outboxStats()).toEqual({ pending: 3, oldestDueAt: stamps[0]!.receivedAt });
      await claim("w1", stamps[0]!.receivedAt, 1);
      expect(await store().outboxStats()).toEqual({ pending: 3, oldestDueAt: stamps[0]!.receivedAt });
      await record(refs[0]!, forwardAttemptFixture(1), worker("w1", "pending", LATER));
      expect(await store().outboxStats()).toEqual({ pending: 3, oldestDueAt: stamps[1]!.receivedAt });
      for (const i of [1, 3]) {
        await store().beginForwardAttempt(refs[i]!, TARGET);
        await record(refs[i]!, forwardAttemptFixture(1, { status: 204, trigger: "manual" }), direct);
      }
      expect(await store().outboxStats()).toEqual({ pending: 1, oldestDueAt: LATER });
      const fan = await fannedOut(A, B, C);
      expect(await store().outboxStats()).toEqual({ pending: 4, oldestDueAt: fan.t0 });
    });
  });

  describe("forwarding: one delivery per destination (design §17)", () => {
    it("starts one pending delivery per destination matched, each claimed on its own with its own numbers", async () => {
      const { to, t0, event } = await fannedOut(A, B, C);
      expect((await deliveriesOf(event))?.map((d) => [d.destinationId, d.state, d.target, d.nextAttemptAt])).toEqual([
        [A, "pending", targetOf(A), t0],
        [B, "pending", targetOf(B), t0],
        [C, "pending", targetOf(C), t0],
      ]);
      const first = await claim("w1", t0, 2);
      const second = await claim("w2", t0, 10);
      expect([...first, ...second].map((c) => [c.destinationId, c.attempt]).sort()).toEqual([
        [A, 1],
        [B, 1],
        [C, 1],
      ]);
      expect([...first, ...second].every((c) => c.eventId === event.eventId)).toBe(true);
      // B is retried: only B comes back, with its own attempt 2.
      const ownerOf = (d: string) => (first.some((c) => c.destinationId === d) ? "w1" : "w2");
      await record(to(A), forwardAttemptFixture(1, { status: 200 }), worker(ownerOf(A), "delivered"));
      await record(to(B), forwardAttemptFixture(1), worker(ownerOf(B), "pending", t0 + 10));
      await record(to(C), forwardAttemptFixture(1, { status: 410 }), worker(ownerOf(C), "failed"));
      expect(await claim("w3", t0 + 10)).toEqual([{ ...to(B), attempt: 2 }]);
      expect((await forwardOf(to(A)))?.attempts.map((a) => a.n)).toEqual([1]);
      expect((await forwardOf(to(B)))?.attempts.map((a) => a.n)).toEqual([1]);
    });

    it("shows the aggregate state: pending while any is, then exhausted, failed, delivered, skipped", async () => {
      const { to, t0, event } = await fannedOut(A, B, C);
      await claim("w1", t0);
      const aggregate = async (ref: DeliveryRef, attempt: AttemptRecord, t: AttemptTransition) => (await store().recordForwardAttempt(ref, attempt, t))?.forwardState;
      expect(await aggregate(to(A), forwardAttemptFixture(1, { status: 200 }), worker("w1", "delivered"))).toBe("pending");
      expect(await summaryState(event)).toBe("pending");
      expect(await aggregate(to(B), forwardAttemptFixture(1, { status: 0 }), worker("w1", "skipped"))).toBe("pending");
      expect(await aggregate(to(C), forwardAttemptFixture(1, { status: 404 }), worker("w1", "failed"))).toBe("failed");
      expect(await summaryState(event)).toBe("failed");

      const other = await fannedOut(A, B);
      await claim("w1", other.t0);
      await record(other.to(A), forwardAttemptFixture(1, { status: 0 }), worker("w1", "skipped"));
      expect(await aggregate(other.to(B), forwardAttemptFixture(1, { status: 200 }), worker("w1", "delivered"))).toBe("delivered");
      const skipped = await fannedOut(A);
      await claim("w1", skipped.t0);
      expect(await aggregate(skipped.to(A), forwardAttemptFixture(1, { status: 0 }), worker("w1", "skipped"))).toBe("skipped");
      const exhausted = await fannedOut(A, B);
      await claim("w1", exhausted.t0);
      await record(exhausted.to(A), forwardAttemptFixture(1, { status: 404 }), worker("w1", "failed"));
      expect(await aggregate(exhausted.to(B), forwardAttemptFixture(1, { status: 503 }), worker("w1", "exhausted"))).toBe("exhausted");
    });

    it("lists by destination: the events with a delivery to it, whatever its state", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const stamps = (await store().appendEvents(
        [captureOf(endpoint, "relay", [A, B]), captureOf(endpoint, "relay", [B]), captureOf(endpoint, "capture"), captureOf(endpoint, "relay", [C])],
        ctx.clock(),
      )) as Stamp[];
      const list = async (destinationId: string, forwardState?: string) =>
        (await store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, destinationId, forwardState })).events.map((e) => e.id);
      const ids = (...i: number[]) => i.map((n) => stamps[n]!.id).reverse();
      expect(await list(A)).toEqual(ids(0));
      expect(await list(B)).toEqual(ids(0, 1));
      expect(await list(C)).toEqual(ids(3));
      expect(await list(C, "pending")).toEqual(ids(3));
      expect(await list(C, "delivered")).toEqual([]);
      expect(await list("0190a000-0000-7000-8000-0000000000ff")).toEqual([]);
    });

    it("creates a delivery for a direct attempt to a destination the capture did not match", async () => {
      const { to, event } = await fannedOut(A);
      expect(await store().beginForwardAttempt(to(B), targetOf(B))).toBe(1);
      expect((await deliveriesOf(event))?.map((d) => [d.destinationId, d.state, d.nextAttemptAt])).toEqual([
        [A, "pending", expect.any(Number)],
        [B, "pending", undefined],
      ]);
      const after = await store().recordForwardAttempt(to(B), forwardAttemptFixture(1, { trigger: "manual", status: 200 }), direct);
      expect(after).toMatchObject({ delivery: { destinationId: B, state: "delivered" }, forwardState: "pending" });
      // Recording without a begin creates it too (whc listen reports after it sent).
      const listen = await store().recordForwardAttempt(to(C), forwardAttemptFixture(1, { trigger: "cli", status: 200, url: "http://localhost:3000/" }), direct);
      expect(listen?.delivery).toMatchObject({ destinationId: C, state: "delivered", target: "http://localhost:3000/" });
    });

    it("keeps an attempt's request digest and message", async () => {
      const { to, t0 } = await fannedOut(A);
      await claim("w1", t0);
      const sha = "ab".repeat(32);
      const after = await record(to(A), forwardAttemptFixture(1, { status: 0, error: "transform_failed", message: "TypeError: x is undefined", requestSha256: "" }), worker("w1", "failed"));
      expect(after?.attempts[0]).toMatchObject({ error: "transform_failed", message: "TypeError: x is undefined", requestSha256: "" });
      const sent = await store().recordForwardAttempt(to(A), forwardAttemptFixture(2, { trigger: "manual", status: 200, requestSha256: sha }), direct);
      expect(sent?.delivery.attempts.map((a) => [a.n, a.requestSha256, a.message])).toEqual([
        [1, "", "TypeError: x is undefined"],
        [2, sha, ""],
      ]);
    });
  });

  describe("forwarding: attempts outside the outbox", () => {
    it("creates the record on a never-forwarded event; a non-2xx fails it, a 2xx delivers it", async () => {
      const { refs } = await captures("capture");
      const ref = refs[0]!;
      expect(await deliveriesOf(ref)).toEqual([]);
      expect(await store().beginForwardAttempt(ref, TARGET)).toBe(1);
      expect(await forwardOf(ref)).toEqual({ destinationId: A, state: "pending", target: TARGET, nextAttemptAt: undefined, attempts: [] });
      expect(await claim("w1", LATER)).toEqual([]);
      expect(await record(ref, forwardAttemptFixture(1, { trigger: "manual", status: 502 }), direct)).toMatchObject({ state: "failed" });
      // A later attempt goes wherever it is sent; the record keeps its first target.
      expect(await store().beginForwardAttempt(ref, "https://elsewhere.example.test/")).toBe(2);
      const delivered = await record(ref, forwardAttemptFixture(2, { trigger: "manual", status: 200 }), direct);
      expect(delivered).toMatchObject({ state: "delivered", target: TARGET, nextAttemptAt: undefined });
      expect(delivered?.attempts.map((a) => [a.n, a.status])).toEqual([
        [1, 502],
        [2, 200],
      ]);
      expect(await record(ref, forwardAttemptFixture(3, { trigger: "cli", status: 0, error: "timeout", body: undefined }), direct)).toMatchObject({
        state: "failed",
      });
    });

    it("leaves an outbox delivery waiting after a failed direct attempt; a 2xx takes it out", async () => {
      const { refs, stamps } = await captures("relay");
      const [ref, t0] = [refs[0]!, stamps[0]!.receivedAt];
      expect(await store().beginForwardAttempt(ref, TARGET)).toBe(1);
      const failed = await record(ref, forwardAttemptFixture(1, { trigger: "manual", status: 503 }), direct);
      expect(failed).toMatchObject({ state: "pending", nextAttemptAt: t0 });
      expect(await claim("w1", t0)).toEqual([{ ...ref, attempt: 2 }]);
      // A direct attempt while the worker holds its claim: the worker's verdict no longer applies.
      expect(await store().beginForwardAttempt(ref, TARGET)).toBe(3);
      expect(await record(ref, forwardAttemptFixture(3, { trigger: "manual", status: 200 }), direct)).toMatchObject({
        state: "delivered",
        nextAttemptAt: undefined,
      });
      expect(await record(ref, forwardAttemptFixture(2), worker("w1", "pending", t0 + 1000))).toMatchObject({ state: "delivered" });
      expect(await claim("w2", LATER)).toEqual([]);
      expect((await forwardOf(ref))?.attempts.map((a) => a.n)).toEqual([1, 2, 3]);
    });

    it("starts a proxy capture pending outside the outbox, its attempt 1 begun; its own attempt decides", async () => {
      const { refs } = await captures("proxy");
      const ref = refs[0]!;
      expect(await forwardOf(ref)).toEqual({ destinationId: A, state: "pending", target: targetOf(A), nextAttemptAt: undefined, attempts: [] });
      expect(await store().outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
      // The proxy's own attempt is 1, taken by the append (ADR 0098): a redelivery meanwhile takes 2.
      const after = await record(ref, forwardAttemptFixture(1, { status: 0, error: "timeout", body: undefined }), direct);
      expect(after).toMatchObject({ state: "failed", nextAttemptAt: undefined });
      expect(await store().beginForwardAttempt(ref, TARGET)).toBe(2);
      expect(await claim("w1", LATER)).toEqual([]);
    });

    it("stores a proxied capture's answer: its response code, and forward_failed as the source when it failed", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const capture = (diagnosticJson: string) =>
        eventFixture(endpoint, { forward: { scheduled: false, deliveries: [{ destinationId: A, target: TARGET }] }, responseCode: 0, diagnosticJson });
      const diagnostic = JSON.stringify({ bodySha256: "00", responseSource: "proxy" });
      const [ok, failed, bare] = (await store().appendEvents([capture(diagnostic), capture(diagnostic), capture("")], ctx.clock())) as Stamp[];
      const ref = (s: Stamp): EventRef => ({ accountId, endpointId: endpoint.id, eventId: s.id });
      expect(await store().recordProxyAnswer(ref(ok!), 201, false)).toBe(true);
      expect(await store().recordProxyAnswer(ref(failed!), 504, true)).toBe(true);
      expect(await store().recordProxyAnswer(ref(bare!), 502, true)).toBe(true);
      const read = async (s: Stamp) => (await store().getEvent(accountId, endpoint.id, s.id))!;
      expect(await read(ok!)).toMatchObject({ responseCode: 201 });
      expect(JSON.parse((await read(ok!)).diagnosticJson)).toEqual({ bodySha256: "00", responseSource: "proxy" });
      expect(await read(failed!)).toMatchObject({ responseCode: 504 });
      expect(JSON.parse((await read(failed!)).diagnosticJson)).toEqual({ bodySha256: "00", responseSource: "forward_failed" });
      expect(await read(bare!)).toMatchObject({ responseCode: 502, diagnosticJson: "" });
      const listed = await store().listEvents({ accountId, endpointId: endpoint.id, responseCode: 504, limit: 10 });
      expect(listed.events.map((e) => e.id)).toEqual([failed!.id]);
      const unknown = { ...ref(ok!), eventId: "00000000-0000-7000-8000-000000000000" };
      expect(await store().recordProxyAnswer(unknown, 200, false)).toBe(false);
    });

    it("finds nothing for an unknown event or another account's, and changes nothing", async () => {
      const { refs } = await captures("relay");
      const other = await ctx.accountWithEndpoint();
      const foreign = { ...refs[0]!, accountId: other.accountId };
      const unknown = { ...refs[0]!, eventId: "00000000-0000-7000-8000-000000000000" };
      for (const ref of [foreign, unknown]) {
        expect(await store().beginForwardAttempt(ref, TARGET)).toBeUndefined();
        expect(await record(ref, forwardAttemptFixture(1), direct)).toBeUndefined();
      }
      expect(await forwardOf(refs[0]!)).toMatchObject({ state: "pending", attempts: [] });
      expect(await claim("w1", LATER)).toEqual([{ ...refs[0]!, attempt: 1 }]);
    });
  });

  describe("forwarding: attempts, lists and removal", () => {
    it("round-trips attempts: sealed body bytes, headers in order, errors; a repeated record keeps the first", async () => {
      const { refs } = await captures("relay");
      const ref = refs[0]!;
      const attempts = [
        forwardAttemptFixture(1),
        forwardAttemptFixture(2, { status: 0, error: "connection_refused", body: undefined, headers: [], durationMs: 3 }),
        forwardAttemptFixture(3, {
          trigger: "manual",
          status: 200,
          bodyTruncated: true,
          headers: [["X-B", "2"], ["x-a", "1"], ["X-B", "1"]],
          body: { ciphertext: new Uint8Array(70_000).fill(7), wrappedKey: new Uint8Array([1]), keyId: "k3" },
          requestSha256: "0f".repeat(32),
        }),
      ];
      let last: DeliveryRecord | undefined;
      for (const a of attempts) last = await record(ref, a, direct);
      expect(await record(ref, forwardAttemptFixture(1, { status: 418 }), direct)).toMatchObject({ state: "delivered" });
      const expected = attempts.map(plainAttempt);
      expect(plainForward(last)?.attempts).toEqual(expected);
      expect(plainForward(await forwardOf(ref))?.attempts).toEqual(expected);
    });

    it("lists by forward state, `none` for events never forwarded, and shows the state in summaries", async () => {
      const { accountId, endpoint, refs } = await captures("capture", "relay", "proxy", "relay", "relay");
      await claim("w1", LATER);
      await record(refs[3]!, forwardAttemptFixture(1, { status: 400 }), worker("w1", "failed"));
      await record(refs[4]!, forwardAttemptFixture(1), worker("w1", "exhausted"));
      await store().beginForwardAttempt(refs[2]!, TARGET);
      await record(refs[2]!, forwardAttemptFixture(1, { status: 201 }), direct);
      const ids = (i: number[]) => i.map((n) => refs[n]!.eventId).reverse();
      const list = async (forwardState: string, searchTokens?: Uint8Array[]) =>
        (await store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, forwardState, searchTokens })).events.map((e) => e.id);
      expect(await list("none")).toEqual(ids([0]));
      expect(await list("pending")).toEqual(ids([1]));
      expect(await list("delivered")).toEqual(ids([2]));
      expect(await list("failed")).toEqual(ids([3]));
      expect(await list("exhausted")).toEqual(ids([4]));
      expect(await list("pending", [token("hello")])).toEqual(ids([1]));
      expect(await list("none", [token("world")])).toEqual(ids([0]));
      const page = await store().listEvents({ accountId, endpointId: endpoint.id, limit: 50 });
      expect(page.events.map((e) => e.forwardState)).toEqual([undefined, "pending", "delivered", "failed", "exhausted"].reverse());
      for (const e of page.events) expect(e).not.toHaveProperty("deliveries");
    });

    it("takes deleted and purged events out of the outbox, their deliveries and attempts with them", async () => {
      // 10 ms between captures: the purge's cutoff falls between two of them.
      let clock = Date.now();
      const spaced = () => (clock += 10);
      const a = await capturesStamped(spaced, "relay", "relay");
      const b = await capturesStamped(spaced, "relay");
      const c = await capturesStamped(spaced, "relay");
      for (const ref of [...a.refs, ...b.refs, ...c.refs]) await record(ref, forwardAttemptFixture(1, { trigger: "manual" }), direct);
      expect((await store().outboxStats()).pending).toBe(4);
      expect(await store().deleteEvent(a.accountId, a.endpoint.id, a.refs[0]!.eventId)).toBe(true);
      expect((await store().outboxStats()).pending).toBe(3);
      expect(await store().deleteEndpoint(b.accountId, b.endpoint.id)).toBe(true);
      expect(await store().outboxStats()).toEqual({ pending: 2, oldestDueAt: a.stamps[1]!.receivedAt });
      await store().purgeEvents(a.stamps[1]!.receivedAt + 1, Date.now());
      expect(await store().outboxStats()).toEqual({ pending: 1, oldestDueAt: c.stamps[0]!.receivedAt });
      expect((await claim("w1", LATER)).map((x) => x.eventId)).toEqual([c.refs[0]!.eventId]);
      for (const ref of [a.refs[0]!, a.refs[1]!, b.refs[0]!]) {
        expect(await store().beginForwardAttempt(ref, TARGET)).toBeUndefined();
        expect(await deliveriesOf(ref)).toBeUndefined();
      }
    });
  });
}
