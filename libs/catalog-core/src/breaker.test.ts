import { describe, expect, it } from "vitest";
import {
  breakerOutcomeOf,
  destinationControlsOf,
  gateOf,
  heldTransition,
  newBreaker,
  probeDue,
  probing,
  recordedBreaker,
  drainTurn,
  drained,
  drainsNext,
  isLetThrough,
  takeTurn,
  waitingTurn,
  type BreakerRecord,
  type DestinationControl,
} from "./breaker.js";
import { countedAttempt, heldDelivery, probedDelivery, recordedDelivery, releasedDelivery, NEVER_FORWARDED } from "./delivery.js";
import { forwardAttemptFixture } from "./testing/fixtures.js";

const control = (over: Partial<DestinationControl> = {}): DestinationControl => ({
  destinationId: "d",
  endpointId: "e",
  accountId: "a",
  name: "billing",
  failures: 3,
  probeAfterMs: 1000,
  paused: false,
  spacingMs: undefined,
  concurrency: undefined,
  ...over,
});

/** Runs outcomes through a closed breaker; answers each step's state and what changed. */
function run(c: DestinationControl, steps: { outcome: "success" | "answer" | "failure" | "none"; probe?: boolean; at: number }[]) {
  let b: BreakerRecord = newBreaker(c);
  return steps.map((s) => {
    const change = recordedBreaker(b, c, s.outcome, s.probe ?? false, s.at);
    b = change.breaker;
    return { state: b.state, failures: b.consecutiveFailures, opened: change.opened, closed: change.closed, nextProbeAt: b.nextProbeAt, delay: b.probeDelayMs };
  });
}

describe("the breaker's state machine (design §18)", () => {
  it("opens at `failures` in a row; an answer in between resets the count", () => {
    const steps = run(control(), [
      { outcome: "failure", at: 1 },
      { outcome: "failure", at: 2 },
      { outcome: "answer", at: 3 },
      { outcome: "failure", at: 4 },
      { outcome: "none", at: 5 },
      { outcome: "failure", at: 6 },
      { outcome: "failure", at: 7 },
    ]);
    expect(steps.map((s) => [s.state, s.failures])).toEqual([
      ["closed", 1],
      ["closed", 2],
      ["closed", 0],
      ["closed", 1],
      ["closed", 1],
      ["closed", 2],
      ["open", 3],
    ]);
    expect(steps[6]).toMatchObject({ opened: true, nextProbeAt: 1007, delay: 1000 });
  });

  it("doubles the probe delay after each failed probe, up to 10 minutes; a success closes and resets it", () => {
    const c = control({ failures: 1, probeAfterMs: 200_000 });
    let b = recordedBreaker(newBreaker(c), c, "failure", false, 0).breaker;
    const delays: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      b = probing(b, "ev", b.nextProbeAt!, 30_000);
      expect(b.state).toBe("half_open");
      b = recordedBreaker(b, c, "failure", true, 1).breaker;
      expect(b.state).toBe("open");
      delays.push(b.probeDelayMs);
    }
    expect(delays).toEqual([400_000, 600_000, 600_000, 600_000]);
    const closed = recordedBreaker(probing(b, "ev", 5, 30_000), c, "success", true, 9);
    expect(closed).toMatchObject({ closed: true, opened: false, breaker: { state: "closed", since: 9, consecutiveFailures: 0, probeDelayMs: 200_000, nextProbeAt: undefined } });
  });

  it("re-opens without doubling when a probe reached nothing; an attempt that is not the probe does not re-open a half-open breaker", () => {
    const c = control({ failures: 1 });
    const open = recordedBreaker(newBreaker(c), c, "failure", false, 0).breaker;
    const half = probing(open, "ev", 1000, 30_000);
    expect(recordedBreaker(half, c, "none", true, 1100).breaker).toMatchObject({ state: "open", probeDelayMs: 1000, nextProbeAt: 2100 });
    expect(recordedBreaker(half, c, "failure", false, 1100).breaker.state).toBe("half_open");
    // A 404 to the probe: the destination is there.
    expect(recordedBreaker(half, c, "answer", true, 1100)).toMatchObject({ closed: true });
    // An attempt sent before the breaker opened that succeeds closes it too.
    expect(recordedBreaker(open, c, "success", false, 50)).toMatchObject({ closed: true });
  });

  it("classifies attempts: failures are network errors, timeouts, 408, 429, 5xx", () => {
    const of = (status: number, error = "") => breakerOutcomeOf({ status, error });
    expect([of(200), of(204), of(404), of(400), of(301)]).toEqual(["success", "success", "answer", "answer", "answer"]);
    expect([of(408), of(429), of(500), of(503), of(508)]).toEqual(["failure", "failure", "failure", "failure", "failure"]);
    expect([of(0, "connection_refused"), of(0, "timeout"), of(0, "dns_failure"), of(0, "tls_error")]).toEqual(["failure", "failure", "failure", "failure"]);
    expect([of(0, "target_not_allowed"), of(0, "egress_capacity_exhausted"), of(0, "transform_failed"), of(0, "interrupted"), of(0, "")]).toEqual([
      "none",
      "none",
      "none",
      "none",
      "none",
    ]);
  });

  it("holds while open or paused; lets the probe's lapsed claim go again; probes only when open, due and not paused", () => {
    const c = control({ failures: 1 });
    const open = recordedBreaker(newBreaker(c), c, "failure", false, 0).breaker;
    expect(gateOf(c, open, 0, 10, false)).toEqual({ kind: "hold" });
    expect(gateOf(control({ paused: true }), newBreaker(c), 0, 10, false)).toEqual({ kind: "hold" });
    const half = probing(open, "ev", 1000, 30_000);
    expect(gateOf(c, half, 0, 2000, isLetThrough(c, half, "ev"))).toEqual({ kind: "go" });
    expect(gateOf(c, half, 0, 2000, isLetThrough(c, half, "other"))).toEqual({ kind: "hold" });
    expect(isLetThrough({ paused: true }, half, "ev")).toBe(false);
    expect(gateOf({ ...c, paused: true }, half, 0, 2000, false)).toEqual({ kind: "hold" });
    expect([probeDue(c, open, 999), probeDue(c, open, 1000), probeDue({ paused: true }, open, 1000), probeDue(c, newBreaker(c), 5000)]).toEqual([false, true, false, false]);
    // A probe whose event vanished: another is picked after the claim and the delay.
    expect(probeDue(c, half, 1000 + 30_000 + 1000)).toBe(true);
  });

  it("spaces claims by the rate: a turn taken moves the next one a spacing on, never bunching a late claim", () => {
    const c = control({ spacingMs: 200, concurrency: 2 });
    let b = newBreaker(c);
    expect(gateOf(c, b, 0, 1000, false)).toEqual({ kind: "go" });
    b = takeTurn(b, c, 1000);
    expect(b.slotAt).toBe(1200);
    expect(gateOf(c, b, 1, 1100, false)).toEqual({ kind: "wait", until: 1200 });
    // Those waiting are due a turn apart, in the order met, across claims; a queue in the past is forgotten.
    let queue = b;
    const turns = [1100, 1100, 1150].map((at) => {
      const w = waitingTurn(queue, c, 1200, at);
      queue = w.breaker;
      return w.at;
    });
    expect(turns).toEqual([1200, 1400, 1600]);
    expect(waitingTurn(queue, c, 1200, 1700).at).toBe(1200);
    expect(gateOf(c, b, 2, 1300, false)).toEqual({ kind: "busy" });
    b = takeTurn(b, c, 5000);
    expect(b.slotAt).toBe(5200);
    // 1000/3 ms: fractional turns, due times in whole ms, never early.
    const third = control({ spacingMs: 1000 / 3 });
    const turned = takeTurn(newBreaker(third), third, 0);
    expect(waitingTurn(waitingTurn(turned, third, turned.slotAt, 0).breaker, third, turned.slotAt, 0).at).toBe(667);
  });

  it("turns a retry or an exhaustion into held while the destination holds; leaves final verdicts", () => {
    const w = (state: "pending" | "exhausted" | "failed" | "delivered") => ({ kind: "worker", owner: "w", state, nextAttemptAt: state === "pending" ? 5 : undefined }) as const;
    expect(heldTransition(w("pending"), true, "failure")).toEqual({ kind: "worker", owner: "w", state: "held", nextAttemptAt: undefined });
    expect(heldTransition(w("pending"), true, "none")).toMatchObject({ state: "held" });
    expect(heldTransition(w("exhausted"), true, "failure")).toMatchObject({ state: "held" });
    expect(heldTransition(w("exhausted"), true, "none")).toMatchObject({ state: "exhausted" });
    expect(heldTransition(w("failed"), true, "answer")).toMatchObject({ state: "failed" });
    expect(heldTransition(w("pending"), false, "failure")).toMatchObject({ state: "pending" });
    expect(heldTransition({ kind: "direct" }, true, "failure")).toEqual({ kind: "direct" });
  });

  it("keeps held deliveries' attempts out of the count, and releases them paced oldest first", () => {
    const claimed = { ...NEVER_FORWARDED, state: "pending" as const, target: "t", nextAttemptAt: 1, claimOwner: "w", claimUntil: 100, started: 3 };
    const held = recordedDelivery(claimed, forwardAttemptFixture(3), { kind: "worker", owner: "w", state: "held" });
    expect(held).toMatchObject({ state: "held", nextAttemptAt: undefined, claimOwner: undefined, spared: 1, started: 3 });
    const probe = probedDelivery(held, "w2", 50, 30);
    expect(probe).toMatchObject({ state: "pending", started: 4, claimOwner: "w2", claimUntil: 80 });
    expect(countedAttempt(probe, probe.started)).toBe(3);
    expect(heldDelivery(claimed)).toMatchObject({ state: "held", claimUntil: undefined });
    expect(releasedDelivery(held, 70)).toMatchObject({ state: "pending", nextAttemptAt: 70 });
  });

  it("drains one at a time: the next held delivery once the one let through settled, a spacing after it; new ones held meanwhile", () => {
    const c = control({ failures: 1 });
    const open = recordedBreaker(newBreaker(c), c, "failure", false, 0).breaker;
    const closed = { ...recordedBreaker(probing(open, "ev-0", 1000, 30_000), c, "success", true, 1050).breaker, holding: true };
    expect(closed).toMatchObject({ state: "closed", probeEventId: undefined, drainedAt: 1050 });
    // Closed with held deliveries: a new one is held, only the one let through goes.
    expect(gateOf(c, closed, 0, 1100, false)).toEqual({ kind: "hold" });
    expect(drainsNext(c, closed, undefined)).toBe(true);
    const first = drainTurn(closed, c, "ev-1", 1060);
    expect(first.at).toBe(1150);
    expect(gateOf(c, first.breaker, 0, 1150, isLetThrough(c, first.breaker, "ev-1"))).toEqual({ kind: "go" });
    expect(drainsNext(c, first.breaker, "pending")).toBe(false);
    expect(drainsNext(c, first.breaker, "delivered")).toBe(true);
    expect(drainsNext(c, first.breaker, "held")).toBe(true);
    expect(drainsNext({ paused: true }, first.breaker, "delivered")).toBe(false);
    // Late: due at once; with a rate limit, its spacing.
    expect(drainTurn(first.breaker, c, "ev-2", 5000).at).toBe(5000);
    expect(drainTurn(first.breaker, { spacingMs: 500 }, "ev-2", 1200).at).toBe(1650);
    expect(drained(first.breaker)).toMatchObject({ holding: false, probeEventId: undefined });
    expect(gateOf(c, drained(first.breaker), 0, 1300, false)).toEqual({ kind: "go" });
  });

  it("reads each destination's control from the endpoint's settings, defaults where none", () => {
    const forwardJson = JSON.stringify([
      { id: "d1", name: "a", url: "https://a.test/", keepPath: true, timeoutMs: 1000, maxAttempts: 6, rateLimit: { perSecond: 4, concurrency: 2 }, breaker: { failures: 2, probeAfterMs: 5000 }, paused: true },
      { id: "d2", name: "b", url: "https://b.test/", keepPath: true, timeoutMs: 1000, maxAttempts: 6, rateLimit: { perMinute: 30 } },
    ]);
    const [a, b] = destinationControlsOf({ id: "e", accountId: "acct", forwardJson });
    expect(a).toMatchObject({ destinationId: "d1", failures: 2, probeAfterMs: 5000, paused: true, spacingMs: 250, concurrency: 2, endpointId: "e", accountId: "acct" });
    expect(b).toMatchObject({ destinationId: "d2", failures: 5, probeAfterMs: 30_000, paused: false, spacingMs: 2000, concurrency: undefined });
    // Part two's one destination: under the endpoint's own id, with the defaults.
    expect(destinationControlsOf({ id: "e", accountId: "acct", forwardJson: JSON.stringify({ url: "https://x.test/" }) })).toMatchObject([{ destinationId: "e", failures: 5 }]);
  });
});
