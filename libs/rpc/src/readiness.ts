import type { Client } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus as Status, type Health } from "@whc/contracts";
import type { Logger } from "@whc/logging";

/** One dependency: whether it answers now. A check that throws counts as down. */
export type DependencyCheck = () => Promise<boolean> | boolean;

/** What `GET /readyz` answers (and the gRPC health of a service that depends on others). */
export interface ReadinessReport {
  status: "ok" | "unavailable";
  checks: Record<string, "ok" | "down">;
  /** The names of the dependencies down, in the order they were given. */
  failing: string[];
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
  /**
   * Why each dependency was down at the last check (`not serving`, `service_unavailable`...),
   * for the logs only: /readyz answers unauthenticated callers and names no more than the dependency.
   */
  reasons(): Record<string, string>;
}

/** How long one dependency may take to answer a readiness check. */
export const CHECK_TIMEOUT_MS = 2000;

/** Undefined when the dependency answers, else why not. */
async function whyDown(check: DependencyCheck): Promise<string | undefined> {
  try {
    return (await check()) === true ? undefined : "not serving";
  } catch (err) {
    const reason = (err as { reason?: unknown }).reason;
    return typeof reason === "string" ? reason : err instanceof Error ? err.message : "failed";
  }
}

/** Every dependency checked at once, each named (`catalog`, `crypto`, `replay`, `nats`, `store`). */
export function createReadiness(checks: Record<string, DependencyCheck>): Readiness {
  const entries = Object.entries(checks);
  let last: Record<string, string> = {};
  return {
    reasons: () => last,
    async check() {
      const why = await Promise.all(entries.map(([, check]) => whyDown(check)));
      const up = why.map((w) => w === undefined);
      const failing = entries.filter((_, i) => !up[i]).map(([name]) => name);
      last = Object.fromEntries(entries.flatMap(([name], i) => (why[i] === undefined ? [] : [[name, why[i] as string]])));
      return {
        status: failing.length === 0 ? "ok" : "unavailable",
        checks: Object.fromEntries(entries.map(([name], i) => [name, up[i] ? "ok" : "down"])),
        failing,
      };
    },
  };
}

/**
 * A peer's gRPC health for one service name: `""` is the peer's own readiness (its own
 * dependencies included), a service's full name whether that service itself can answer.
 */
export function peerServing(client: Client<typeof Health>, service: string): DependencyCheck {
  return async () => (await client.check({ service }, { timeoutMs: CHECK_TIMEOUT_MS })).status === Status.SERVING;
}

/**
 * Checks every `intervalMs` and logs a warning naming each dependency down, at every check
 * while it stays down, and one line when it is back: an outage shows in the logs of every
 * process it hurts, not only in a probe nobody looks at.
 */
export function watchDependencies(readiness: Readiness, logger: Logger, intervalMs: number): { close(): Promise<void> } {
  let down = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const round = async () => {
    const report = await readiness.check();
    const reasons = readiness.reasons();
    for (const dependency of report.failing) logger.warn({ dependency, reason: reasons[dependency] }, `dependency down: ${dependency}`);
    for (const dependency of down) if (!report.failing.includes(dependency)) logger.info({ dependency }, `dependency back: ${dependency}`);
    down = new Set(report.failing);
  };
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void round().finally(schedule), intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
