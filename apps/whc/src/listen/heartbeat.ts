import os from "node:os";
import { ApiError, LISTENER_LIMITS, type ApiClient, type Cursor } from "@whc/api-model";
import type { OutageWatch } from "./outage.js";
import type { Reporter } from "./report.js";

/** What a heartbeat tells about this run. */
export interface ListenerState {
  cursor: Cursor | undefined;
  lastError: string | undefined;
}

export interface HeartbeatOptions {
  client: ApiClient;
  endpointId: string;
  listenerId: string;
  intervalMs: number;
  state(): ListenerState;
  outage: OutageWatch;
  report: Reporter;
}

/** How long the goodbye may take when listen stops. */
const GOODBYE_MS = 2000;

/**
 * Registers this run as one of the endpoint's listeners (design §19), heartbeats every
 * `intervalMs` with its cursor and last error, and says goodbye when stopped. A heartbeat never
 * stops the run: the API unreachable is the outage watch's to say, a refusal is said once, and
 * the errors that end a run (401, 403, 404) are the long poll's to report.
 */
export function startHeartbeat(o: HeartbeatOptions): { stop(): Promise<void> } {
  const startedAt = new Date().toISOString();
  const host = os.hostname().slice(0, LISTENER_LIMITS.hostLength) || "unknown";
  const warned = new Set<string>();
  const control = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  async function beat(): Promise<void> {
    const { cursor, lastError } = o.state();
    try {
      await o.client.listeners.heartbeat(
        o.endpointId,
        o.listenerId,
        { host, startedAt, cursor: cursor ?? null, lastError: lastError?.slice(0, LISTENER_LIMITS.lastErrorLength) ?? null },
        control.signal,
      );
      o.outage.answered();
    } catch (err) {
      if (control.signal.aborted || !ApiError.is(err)) return;
      if (err.transient) return o.outage.failed(err);
      if (err.status === 401 || err.status === 403 || err.status === 404 || warned.has(err.code)) return;
      warned.add(err.code);
      const why = err.code === "quota_exceeded" ? `the endpoint already has ${String(err.details.limit ?? "its most")} listeners` : `${err.status} ${err.code}: ${err.message}`;
      o.report.warning("listener_not_registered", `this listen is not shown among the endpoint's listeners (${why}); it goes on forwarding`);
    }
  }

  const next = () => {
    if (control.signal.aborted) return;
    timer = setTimeout(() => {
      inFlight = beat().finally(next);
    }, o.intervalMs);
  };
  inFlight = beat().finally(next);

  return {
    async stop() {
      control.abort();
      clearTimeout(timer);
      await inFlight.catch(() => undefined);
      await o.client.listeners.delete(o.endpointId, o.listenerId, AbortSignal.timeout(GOODBYE_MS)).catch(() => undefined);
    },
  };
}
