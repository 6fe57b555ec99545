import { Counter, Registry } from "prom-client";
import { ALERT_EVENTS } from "@whc/api-model";
import { ATTEMPT_OUTCOMES, type AttemptOutcomeLabel } from "./forward-policy.js";

const FINAL_STATES = ["delivered", "failed", "exhausted"] as const;

export interface AlertMetrics {
  /** Only the whc_alert* series: the process's own metrics are its server's to add. */
  readonly registry: Registry;
  attempt(type: string, outcome: AttemptOutcomeLabel): void;
  /** An alert reached a final state: sent (delivered), or given up (failed, exhausted). */
  finished(type: string, state: string): void;
}

/** Prometheus metrics of alerts (design §18), by alert type; label values come from closed sets. */
export function createAlertMetrics(): AlertMetrics {
  const registry = new Registry();
  const attempts = new Counter({
    name: "whc_alert_attempts_total",
    help: "Alert attempts by alert type and outcome: delivered (2xx), rejected (another status), network_error (no answer), refused (not sent: URL not allowed, no egress capacity)",
    labelNames: ["type", "outcome"],
    registers: [registry],
  });
  const alerts = new Counter({
    name: "whc_alerts_total",
    help: "Alerts that reached a final state, by alert type: delivered (sent), failed (refused by the channel or the egress guard), exhausted (out of attempts)",
    labelNames: ["type", "state"],
    registers: [registry],
  });
  const known = (type: string) => (ALERT_EVENTS as readonly string[]).includes(type);
  // Every series exists from the start, at 0, so rates over them are defined at once.
  for (const type of ALERT_EVENTS) {
    for (const outcome of ATTEMPT_OUTCOMES) attempts.labels(type, outcome).inc(0);
    for (const state of FINAL_STATES) alerts.labels(type, state).inc(0);
  }
  return {
    registry,
    attempt(type, outcome) {
      if (known(type)) attempts.labels(type, outcome).inc();
    },
    finished(type, state) {
      if (known(type) && (FINAL_STATES as readonly string[]).includes(state)) alerts.labels(type, state).inc();
    },
  };
}
