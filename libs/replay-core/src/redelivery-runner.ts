import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Client } from "@connectrpc/connect";
import type { CatalogService, RedeliveryJob } from "@whc/contracts";
import type { Logger } from "@whc/logging";

export interface RedeliveryRunnerDeps {
  catalog: Client<typeof CatalogService>;
  logger: Logger;
  /** Told when a page put deliveries back in the outbox: this process's forwarder looks at once. */
  onQueued?: () => void;
}

export interface RedeliveryRunnerOptions {
  /** WHC_FORWARD_POLL_MS: how often it looks for a job, and at a job whose window is full. */
  pollMs: number;
  /** WHC_FORWARD_CLAIM_MS: a job's lease; another runner takes it this long after this one died. */
  leaseMs: number;
  /** WHC_REDELIVERY_PAGE_SIZE: events one page walks (one catalog transaction). */
  pageSize: number;
  /** WHC_REDELIVERY_WINDOW: a job's deliveries waiting in the outbox at most; its walk waits for them below it. */
  window: number;
  /** Jobs worked at once (default 4). */
  concurrency?: number;
  /** Unique per process; generated when left out. */
  owner?: string;
}

export interface RedeliveryRunner {
  readonly owner: string;
  start(): void;
  /** Looks for a job now (one was started). */
  wake(): void;
  /** Stops walking, gives the jobs it holds back at once (another runner continues them), and waits for the pages in flight. */
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;

/** Deliveries the job put back that have not ended yet. */
function open(job: RedeliveryJob): number {
  return Number(job.queued - job.done - job.failed);
}

/**
 * Bulk redelivery's runner (design §18; ADR 0089), beside the relay outbox worker in every replay
 * process and in the all-in-one process. It leases running jobs from the catalog (one runner
 * per job at a time, any number of replicas) and walks each, a page at a time: the catalog puts
 * a page's deliveries back in the outbox and moves the job's cursor in one transaction, so a
 * runner that dies between pages leaves the job exactly where its last page left it, for the
 * next runner once the lease ends. It keeps at most `window` of a job's deliveries waiting at
 * once, so a job of a million events does not bury live traffic: the outbox (and the rate
 * limits and breakers applied at its claim) sends them. A walked job is handed back and looked
 * at again a lease later: the outbox's records end it as its last delivery ends.
 */
export function createRedeliveryRunner(deps: RedeliveryRunnerDeps, options: RedeliveryRunnerOptions): RedeliveryRunner {
  const { catalog, logger } = deps;
  const owner = options.owner ?? `${hostname()}-${process.pid}-redelivery-${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 4;
  const leaseMs = BigInt(options.leaseMs);
  const working = new Map<string, Promise<void>>();
  const pauses = new Set<() => void>();
  let running = false;
  let claiming = false;
  let failures = 0;
  let resumeAt = 0;
  let timer: NodeJS.Timeout | undefined;

  /** Waits pollMs, or less when the runner stops. */
  const pause = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        pauses.delete(done);
        resolve();
      };
      const t = setTimeout(done, options.pollMs);
      pauses.add(done);
    });

  async function release(jobId: string, afterMs: number): Promise<void> {
    await catalog.releaseRedeliveryJob({ jobId, owner, afterMs: BigInt(afterMs) }).catch((err: unknown) => logger.warn({ err, jobId }, "redelivery job not released; its lease will lapse"));
  }

  /** The job's walk, page by page, while this runner holds its lease. */
  async function work(claimed: RedeliveryJob): Promise<void> {
    let job: RedeliveryJob | undefined = claimed;
    try {
      while (job && job.state === "running") {
        if (!running) return await release(job.id, 0);
        const limit: number = job.walked ? 0 : Math.max(0, Math.min(options.pageSize, options.window - open(job)));
        // Its window is full: the outbox sends what it put back before it puts back more.
        if (!job.walked && limit === 0) await pause();
        const before = job.queued;
        job = (await catalog.runRedeliveryPage({ jobId: job.id, owner, limit, leaseMs })).job;
        if (!job) return;
        if (job.queued > before) {
          logger.debug({ jobId: job.id, queued: Number(job.queued), total: Number(job.total) }, "redelivery page queued");
          deps.onQueued?.();
        }
        // Walked: the outbox ends it as its deliveries end; looked at again (settled) a lease later.
        if (job.state === "running" && job.walked) return await release(job.id, options.leaseMs);
      }
      if (job) logger.info({ jobId: job.id, state: job.state, total: Number(job.total), done: Number(job.done), failed: Number(job.failed) }, "redelivery job finished");
    } catch (err) {
      logger.warn({ err, jobId: claimed.id }, "redelivery page failed; the job is given back");
      await release(claimed.id, options.pollMs);
    }
  }

  async function claimRound(): Promise<void> {
    while (running && working.size < concurrency) {
      const { job } = await catalog.claimRedeliveryJob({ owner, leaseMs });
      if (failures > 0) logger.info({ failures }, "redelivery jobs reachable again");
      failures = 0;
      if (!job) return;
      const id = job.id;
      working.set(
        id,
        work(job).finally(() => {
          working.delete(id);
          pump();
        }),
      );
    }
  }

  function pump(): void {
    if (!running || claiming || Date.now() < resumeAt) return;
    claiming = true;
    claimRound()
      .catch((err: unknown) => {
        failures += 1;
        const backoff = Math.min(options.pollMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
        resumeAt = Date.now() + backoff;
        if (failures === 1 || failures % 20 === 0) logger.warn({ err, failures, backoffMs: backoff }, "redelivery job claim failed; backing off");
      })
      .finally(() => {
        claiming = false;
      });
  }

  return {
    owner,
    start() {
      if (running) return;
      running = true;
      timer = setInterval(pump, options.pollMs);
      timer.unref();
      pump();
    },
    wake: () => pump(),
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      for (const wake of [...pauses]) wake();
      while (claiming || working.size > 0) {
        await Promise.allSettled([...working.values()]);
        if (claiming) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}
