import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { DeliveryClaim } from "@whc/contracts";
import type { CaptureBus, DeliveryRef, EgressLease, EgressLeases } from "@whc/ports";
import { createAttemptSender, type ForwardDeps, type ForwardOptions, type SentAttempt } from "./forward-attempt.js";
import { workerVerdict, type Verdict } from "./forward-policy.js";

export interface ForwarderOptions extends ForwardOptions {
  /** WHC_FORWARD_RETRY_BASE_MS: the delay after a first failed attempt (then x3). */
  retryBaseMs: number;
  /** WHC_FORWARD_POLL_MS: how often the outbox is looked at without a wake-up. */
  pollMs: number;
  /** WHC_FORWARD_CLAIM_MS: how long a claimed delivery stays hidden from other workers. */
  claimMs: number;
  /** Attempts in flight at most (default 32). */
  concurrency?: number;
  /** Unique per process; generated when left out. */
  owner?: string;
  random?: () => number;
}

export interface Forwarder {
  readonly owner: string;
  start(): void;
  /** Looks at the outbox now. */
  wake(): void;
  /** Stops claiming, then waits for the attempts in flight to be sent and recorded. */
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;

interface Waiter {
  wake: () => void;
}

/**
 * Egress leases taken in turn: within this process the attempts waiting for one origin are
 * served first come, first served (only the oldest asks the lease store, and it asks again
 * the moment a lease of ours is given back), so none of them starves while others go ahead.
 */
function createLeaseQueue(leases: EgressLeases, running: () => boolean, now: () => number) {
  const queues = new Map<string, Waiter[]>();
  const wakeNext = (origin: string) => queues.get(origin)?.[0]?.wake();

  return {
    async acquire(origin: string, giveUpAt: number): Promise<EgressLease | undefined> {
      const queue = queues.get(origin) ?? [];
      queues.set(origin, queue);
      const me: Waiter = { wake: () => undefined };
      queue.push(me);
      try {
        for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
          if (queue[0] === me) {
            const lease = await leases.acquire(origin);
            if (lease) {
              return {
                key: lease.key,
                release: async () => {
                  await lease.release();
                  wakeNext(origin);
                },
              };
            }
          }
          if (!running() || now() >= giveUpAt) return undefined;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(1, Math.min(pause, giveUpAt - now())));
            me.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      } finally {
        queue.splice(queue.indexOf(me), 1);
        if (queue.length === 0) queues.delete(origin);
        else wakeNext(origin);
      }
    },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The relay outbox worker. Any number of them (one per replay process) share one catalog:
 * a claim hands out each due delivery to one worker with the attempt number it may send, so
 * no attempt is sent twice. It claims when woken by ingest (the bus), every pollMs, when an
 * attempt finishes, and when the catalog says the next delivery falls due; with the catalog
 * down it backs off and keeps trying. Nothing it meets stops it: errors are logged, and a
 * claim never recorded expires into the next attempt.
 */
export function createForwarder(deps: ForwardDeps & { bus: Pick<CaptureBus, "subscribeOutboxWake"> }, options: ForwarderOptions): Forwarder {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;
  const sender = createAttemptSender(deps, options);
  const owner = options.owner ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 32;
  const leases = createLeaseQueue(deps.leases, () => running, now);
  // A burst to one origin is normal: a worker waits for egress capacity for up to half its
  // claim (so that the verdict still counts), before the attempt fails as exhausted capacity.
  const acquireWaiting = (origin: string) => leases.acquire(origin, now() + options.claimMs / 2);

  const inFlight = new Set<Promise<void>>();
  let running = false;
  let claiming = false;
  let again = false;
  let failures = 0;
  let resumeAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon: { at: number; timer: NodeJS.Timeout } | undefined;
  let unsubscribe: (() => void) | undefined;

  /**
   * Attempt `claim.attempt` of the delivery, sent not before `notBefore`. Its number as counted
   * against maxAttempts leaves out attempts that ended held (design §18: held never consumes
   * attempts) and, for a delivery a bulk redelivery put back (ADR 0089), the attempts it had
   * then: its attempts are `bulk` and its budget starts afresh.
   */
  async function attempt(ref: DeliveryRef, claim: DeliveryClaim, notBefore: number): Promise<{ sent: SentAttempt; verdict: Verdict; before: string | undefined } | undefined> {
    const n = claim.attempt;
    const trigger = claim.bulkJobId ? "bulk" : n === 1 ? "initial" : "retry";
    // attemptBase is counted the same way (the job put it back after that many counted attempts).
    const budgeted = (claim.counted || n) - claim.attemptBase;
    const loaded = await sender.load(ref);
    if (loaded.kind === "missing") return undefined;
    if (loaded.kind === "not_configured") {
      // The endpoint no longer has this destination (or no forward settings at all): a failed
      // attempt, not sent. target_not_allowed is the ATTEMPT_ERRORS word for "this delivery has
      // no destination it may go to". The record keeps the delivery's stored target (sealed).
      const url = loaded.delivery?.target || "about:blank";
      const sent = sender.refused(n, trigger, url, { kind: "refused", reason: "target_not_allowed" }, ref.destinationId);
      return { sent, verdict: { state: "failed" }, before: loaded.delivery?.state };
    }
    const { delivery } = loaded;
    if (budgeted > delivery.settings.maxAttempts) {
      // A claim counts as an attempt from the moment it is taken (design §14): attempts whose
      // sender died mid-send (a crash, a kill) still spend maxAttempts, so a destination that
      // brings its sender down is not sent to forever. The record keeps the stored target.
      const sent = sender.refused(n, trigger, delivery.target, { kind: "interrupted" }, ref.destinationId, delivery.event);
      return { sent, verdict: { state: "exhausted" }, before: delivery.delivery?.state };
    }
    const sent = await sender.send(delivery, n, trigger, { acquire: acquireWaiting, notBefore });
    const verdict = workerVerdict(sent.outcome, budgeted, delivery.settings.maxAttempts, {
      retryBaseMs: options.retryBaseMs,
      nowMs: now(),
      ...(options.random ? { random: options.random } : {}),
    });
    return { sent, verdict, before: delivery.delivery?.state };
  }

  async function deliver(claim: DeliveryClaim, claimedAt: number): Promise<void> {
    const ref = { accountId: claim.accountId, endpointId: claim.endpointId, eventId: claim.eventId, destinationId: claim.destinationId };
    try {
      // A rate-limited destination's delivery goes sendAfterMs after its claim (ADR 0087).
      const made = await attempt(ref, claim, claimedAt + claim.sendAfterMs);
      if (!made) return;
      const transition = { kind: "worker", state: made.verdict.state, nextAttemptAt: made.verdict.nextAttemptAt, owner } as const;
      // The request went out: its record is worth a few tries (else the claim lapses and the
      // delivery is tried again with the next number).
      for (let tries = 1; ; tries += 1) {
        try {
          await sender.record(ref, made.sent, transition, made.before);
          return;
        } catch (err) {
          if (tries >= 3) throw err;
          await sleep(100 * 4 ** tries);
        }
      }
    } catch (err) {
      logger.error({ err, eventId: ref.eventId, destinationId: ref.destinationId, attempt: claim.attempt }, "forward attempt not completed; its claim will lapse");
    }
  }

  /**
   * A delivery falling due before the next poll (a retry this worker or another recorded): the
   * outbox is looked at again then. The delay is the catalog's, counted from its clock at the
   * claim, so a skewed clock here or a timer firing early costs one more claim, not a poll.
   */
  function lookAgainIn(delayMs: number) {
    if (!running || delayMs <= 0 || delayMs >= options.pollMs) return;
    const at = now() + delayMs;
    if (soon && soon.at <= at) return;
    if (soon) clearTimeout(soon.timer);
    const timer = setTimeout(() => {
      soon = undefined;
      pump();
    }, delayMs);
    timer.unref();
    soon = { at, timer };
  }

  function launch(claim: DeliveryClaim, claimedAt: number) {
    const task = deliver(claim, claimedAt).finally(() => {
      inFlight.delete(task);
      pump();
    });
    inFlight.add(task);
  }

  async function claimRound(): Promise<void> {
    do {
      again = false;
      const room = concurrency - inFlight.size;
      if (room <= 0) return;
      const { deliveries, nextDueInMs, limiterWaits } = await catalog.claimDeliveries({ owner, limit: room, claimMs: BigInt(options.claimMs) });
      if (failures > 0) logger.info({ failures }, "outbox reachable again");
      failures = 0;
      const claimedAt = now();
      for (const claim of deliveries) launch(claim, claimedAt);
      deps.metrics?.limiterWaits(limiterWaits);
      lookAgainIn(Number(nextDueInMs));
      // A full page: more may be due.
      if (deliveries.length === room) again = true;
    } while (again && running);
  }

  function pump(): void {
    if (!running) return;
    if (claiming) {
      again = true;
      return;
    }
    if (now() < resumeAt) return;
    claiming = true;
    claimRound()
      .catch((err: unknown) => {
        failures += 1;
        const backoff = Math.min(options.pollMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
        resumeAt = now() + backoff;
        if (failures === 1 || failures % 20 === 0) logger.warn({ err, failures, backoffMs: backoff }, "outbox claim failed; backing off");
      })
      .finally(() => {
        claiming = false;
        // Woken between the last claim and now: look again.
        if (again && running) pump();
      });
  }

  return {
    owner,
    start() {
      if (running) return;
      running = true;
      unsubscribe = deps.bus.subscribeOutboxWake(() => pump());
      timer = setInterval(() => pump(), options.pollMs);
      timer.unref();
      pump();
    },
    wake: () => pump(),
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      if (soon) clearTimeout(soon.timer);
      soon = undefined;
      unsubscribe?.();
      unsubscribe = undefined;
      while (claiming || inFlight.size > 0) {
        await Promise.allSettled([...inFlight]);
        if (claiming) await sleep(5);
      }
    },
  };
}
