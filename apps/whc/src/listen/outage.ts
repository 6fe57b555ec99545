import type { ApiError } from "@whc/api-model";
import type { Reporter } from "./report.js";

export interface OutageWatch {
  /** A call failed for a transient reason (unreachable, 502, 503, 504). */
  failed(err: ApiError): void;
  /** A call was answered. */
  answered(): void;
}

/**
 * While the API cannot be reached, says so once, naming its URL and why, and once more when it
 * answers again, whichever of listen's calls (the long poll, a detail, a heartbeat) noticed.
 */
export function createOutageWatch(apiUrl: string, report: Reporter, now = Date.now): OutageWatch {
  let since: number | undefined;
  return {
    failed(err) {
      if (since !== undefined) return;
      since = now();
      const prefix = `Cannot reach ${apiUrl}: `;
      report.unreachable(apiUrl, err.status, err.code, err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message);
    },
    answered() {
      if (since === undefined) return;
      const afterMs = now() - since;
      since = undefined;
      report.reachable(apiUrl, afterMs);
    },
  };
}
