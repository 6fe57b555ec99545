import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Client } from "@connectrpc/connect";
import type { AlertClaim, CatalogService, CryptoService } from "@whc/contracts";
import { ALERT_MAX_ATTEMPTS, ALERT_TIMEOUT_MS } from "@whc/api-model";
import type { EgressGuard } from "@whc/egress-guard";
import type { Logger } from "@whc/logging";
import type { EgressLeases } from "@whc/ports";
import { alertRequest } from "./alert-message.js";
import type { AlertMetrics } from "./alert-metrics.js";
import { errorOf, outcomeLabel, workerVerdict, type AttemptOutcome, type Verdict } from "./forward-policy.js";

export interface AlertWorkerDeps {
  catalog: Client<typeof CatalogService>;
  /** Opens webhook channels' sealed secrets. */
  crypto: Client<typeof CryptoService>;
  leases: EgressLeases;
  /** The one way out: alerts are vetted and sent as forwards are (design §14, §18). */
  egress: EgressGuard;
  logger: Logger;
  metrics?: AlertMetrics | undefined;
  now?: () => number;
}

export interface AlertWorkerOptions {
  /** WHC_FORWARD_RETRY_BASE_MS: alerts are retried as relay deliveries are (x3, +-20 %). */
  retryBaseMs: number;
  /** WHC_FORWARD_POLL_MS: how often the alert outbox is looked at. */
  pollMs: number;
  /** WHC_FORWARD_CLAIM_MS. */
  claimMs: number;
  connectTimeoutMs: number;
  /** Attempts of one alert (default ALERT_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** Alerts in flight at most (default 8). */
  concurrency?: number;
  owner?: string;
  random?: () => number;
}

export interface AlertWorker {
  readonly owner: string;
  start(): void;
  /** Looks at the alert outbox now. */
  wake(): void;
  /** Stops claiming, then waits for the alerts in flight to be sent and recorded. */
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One attempt's outcome and what it was made of. */
interface Made {
  at: number;
  outcome: AttemptOutcome;
}

/**
 * One attempt of a claimed alert: the channel's URL vetted by the egress guard (at every
 * attempt: DNS may change), an egress lease on its origin, the signed message (or Slack's text)
 * sent to the vetted address, and the relay policy's verdict. Every failure of the channel or
 * the guard is the outcome, never a throw.
 */
function createAlertAttempts(deps: AlertWorkerDeps, options: AlertWorkerOptions, now: () => number, maxAttempts: number) {
  const { logger } = deps;

  async function secretOf(claim: AlertClaim): Promise<Uint8Array | undefined> {
    const sealed = claim.channel!.sealedSecret;
    if (sealed.length === 0) return undefined;
    return (await deps.crypto.openSecret({ sealed })).plaintext;
  }

  /** Sends attempt n; every failure of the channel or the guard is the outcome, never a throw. */
  async function send(claim: AlertClaim): Promise<Made> {
    const channel = claim.channel!;
    const vetted = await deps.egress.vet(channel.url);
    if (!vetted.ok) {
      const outcome: AttemptOutcome = vetted.reason === "dns_failure" ? { kind: "network_error", reason: "dns_failure" } : { kind: "refused", reason: "target_not_allowed" };
      return { at: now(), outcome };
    }
    const secret = await secretOf(claim);
    const lease = await deps.leases.acquire(vetted.target.url.origin);
    if (!lease) return { at: now(), outcome: { kind: "refused", reason: "egress_capacity_exhausted" } };
    try {
      const at = now();
      const request = alertRequest(claim.alert!, channel, secret, at);
      const result = await deps.egress.send({
        target: vetted.target,
        address: vetted.address,
        family: vetted.family,
        method: "POST",
        headers: request.headers,
        body: request.body,
        connectTimeoutMs: Math.min(options.connectTimeoutMs, ALERT_TIMEOUT_MS),
        totalTimeoutMs: ALERT_TIMEOUT_MS,
        maxExcerptBytes: 1024,
      });
      if (result.kind === "network_error") return { at, outcome: { kind: "network_error", reason: result.reason } };
      return { at, outcome: { kind: "response", status: result.status } };
    } finally {
      await lease.release().catch((err: unknown) => logger.warn({ err }, "egress lease not released"));
    }
  }

  /** Attempt n of the claimed alert, or none when its attempts are spent (claims whose sender stopped count, as relay's do). */
  async function attempt(claim: AlertClaim): Promise<{ made: Made; verdict: Verdict }> {
    if (claim.attempt > maxAttempts) return { made: { at: now(), outcome: { kind: "interrupted" } }, verdict: { state: "exhausted" } };
    const made = await send(claim);
    const verdict = workerVerdict(made.outcome, claim.attempt, maxAttempts, {
      retryBaseMs: options.retryBaseMs,
      nowMs: now(),
      ...(options.random ? { random: options.random } : {}),
    });
    return { made, verdict };
  }

  return attempt;
}

/**
 * The alert outbox's worker (ADR 0085), beside the relay outbox's in every replay process and in
 * the all-in-one process. Each claimed alert is one attempt (createAlertAttempts), judged by the
 * relay policy (2xx delivered; network errors, 408, 429, 5xx and no egress capacity retried
 * after the backoff; anything else failed; exhausted after maxAttempts) and recorded under the
 * claim. Nothing a channel does escapes as an exception: every failure is an outcome (design §14).
 */
export function createAlertWorker(deps: AlertWorkerDeps, options: AlertWorkerOptions): AlertWorker {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;
  const owner = options.owner ?? `${hostname()}-${process.pid}-alerts-${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 8;
  const attempt = createAlertAttempts(deps, options, now, options.maxAttempts ?? ALERT_MAX_ATTEMPTS);

  const inFlight = new Set<Promise<void>>();
  let running = false;
  let claiming = false;
  let again = false;
  let failures = 0;
  let resumeAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon: { at: number; timer: NodeJS.Timeout } | undefined;

  async function deliver(claim: AlertClaim): Promise<void> {
    const alert = claim.alert!;
    try {
      const { made, verdict } = await attempt(claim);
      deps.metrics?.attempt(alert.type, outcomeLabel(made.outcome));
      const record = {
        alertId: alert.id,
        claimOwner: owner,
        attempt: claim.attempt,
        atMs: BigInt(made.at),
        status: made.outcome.kind === "response" ? made.outcome.status : 0,
        error: errorOf(made.outcome),
        state: verdict.state,
        ...(verdict.nextAttemptAt !== undefined ? { nextAttemptAtMs: BigInt(verdict.nextAttemptAt) } : {}),
      };
      for (let tries = 1; ; tries += 1) {
        try {
          const { recorded } = await catalog.recordAlertAttempt(record);
          if (recorded && verdict.state !== "pending") deps.metrics?.finished(alert.type, verdict.state);
          return;
        } catch (err) {
          if (tries >= 3) throw err;
          await sleep(100 * 4 ** tries);
        }
      }
    } catch (err) {
      logger.error({ err, alertId: alert.id, attempt: claim.attempt }, "alert attempt not completed; its claim will lapse");
    }
  }

  function lookAgainIn(delayMs: number) {
    if (!running || delayMs <= 0 || delayMs >= options.pollMs) return;
    const at = now() + delayMs;
    if (soon && soon.at <= at) return;
    if (soon) clearTimeout(soon.timer);
    const t = setTimeout(() => {
      soon = undefined;
      pump();
    }, delayMs);
    t.unref();
    soon = { at, timer: t };
  }

  function launch(claim: AlertClaim) {
    const task = deliver(claim).finally(() => {
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
      const { alerts, nextDueInMs } = await catalog.claimAlerts({ owner, limit: room, claimMs: BigInt(options.claimMs) });
      if (failures > 0) logger.info({ failures }, "alert outbox reachable again");
      failures = 0;
      for (const claim of alerts) launch(claim);
      lookAgainIn(Number(nextDueInMs));
      if (alerts.length === room) again = true;
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
        if (failures === 1 || failures % 20 === 0) logger.warn({ err, failures, backoffMs: backoff }, "alert outbox claim failed; backing off");
      })
      .finally(() => {
        claiming = false;
        if (again && running) pump();
      });
  }

  return {
    owner,
    start() {
      if (running) return;
      running = true;
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
      while (claiming || inFlight.size > 0) {
        await Promise.allSettled([...inFlight]);
        if (claiming) await sleep(5);
      }
    },
  };
}
