import { Counter, Gauge, Registry } from "prom-client";
import { ATTEMPT_TRIGGERS } from "@whc/api-model";
import { ATTEMPT_OUTCOMES, type AttemptOutcomeLabel } from "./forward-policy.js";

const FINAL_STATES = ["delivered", "failed", "exhausted", "skipped"] as const;

export interface OutboxFigures {
  pending: number;
  /** Due time of the oldest delivery waiting in the outbox. */
  oldestDueAt?: number | undefined;
  /** The breakers not closed or holding deliveries (design §18); the others are closed and hold nothing. */
  breakers?: readonly BreakerFigures[] | undefined;
}

export interface BreakerFigures {
  destinationId: string;
  state: string;
  held: number;
}

/** whc_forward_breaker_state's values. */
const BREAKER_STATE_VALUES: Record<string, number> = { closed: 0, half_open: 1, open: 2 };

export interface ForwardMetrics {
  /** Only the whc_forward_* series: the process's own metrics are its server's to add. */
  readonly registry: Registry;
  /** An attempt to the destination `destinationId` (its id, never its URL: design §17). */
  attempt(trigger: string, outcome: AttemptOutcomeLabel, destinationId: string): void;
  /** A delivery to `destinationId` reached a final state. */
  finished(state: string, destinationId: string): void;
  /** Due deliveries a claim moved to their destination's rate limit turn. */
  limiterWaits(count: number): void;
}

/**
 * Prometheus metrics of forwarding. Label values come from closed sets; the outbox gauges are
 * read from the catalog when scraped (one call serves both gauges of a scrape), and keep their
 * last values while the catalog cannot answer.
 */
export function createForwardMetrics(outbox: () => Promise<OutboxFigures>, now: () => number = Date.now): ForwardMetrics {
  const registry = new Registry();
  const attempts = new Counter({
    name: "whc_forward_attempts_total",
    help: "Forward attempts by trigger (initial, retry, manual, cli) and outcome: delivered (2xx), rejected (another status), network_error (no answer), refused (not sent: target not allowed, no egress capacity, body unreadable)",
    labelNames: ["trigger", "outcome"],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "whc_forward_deliveries_total",
    help: "Deliveries that reached a final state: delivered, failed (not retried), exhausted (out of attempts) or skipped (the transform answered null)",
    labelNames: ["state"],
    registers: [registry],
  });
  // Per destination (design §17): labelled by its id, never its URL (a tenant's URL is not a
  // label, and an id is stable through a URL change). A series appears with its first attempt.
  const destinationAttempts = new Counter({
    name: "whc_forward_destination_attempts_total",
    help: "Forward attempts by destination id and outcome (as whc_forward_attempts_total's)",
    labelNames: ["destination", "outcome"],
    registers: [registry],
  });
  const destinationDeliveries = new Counter({
    name: "whc_forward_destination_deliveries_total",
    help: "Deliveries that reached a final state, by destination id and state",
    labelNames: ["destination", "state"],
    registers: [registry],
  });

  let last: { at: number; figures: Promise<OutboxFigures> } | undefined;
  const figures = () => {
    if (!last || now() - last.at > 1000) last = { at: now(), figures: outbox() };
    return last.figures;
  };
  new Gauge({
    name: "whc_forward_outbox_pending",
    help: "Relay deliveries waiting in the outbox (due or scheduled for a retry)",
    registers: [registry],
    async collect() {
      try {
        this.set((await figures()).pending);
      } catch {
        // The catalog did not answer: the last value stands.
      }
    },
  });
  new Gauge({
    name: "whc_forward_outbox_oldest_age_seconds",
    help: "How long the oldest due delivery in the outbox has been due (0 when none is)",
    registers: [registry],
    async collect() {
      try {
        const { oldestDueAt } = await figures();
        this.set(oldestDueAt === undefined ? 0 : Math.max(0, (now() - oldestDueAt) / 1000));
      } catch {
        // As above.
      }
    },
  });

  // Delivery control (design §18), per destination id: read from the catalog at each scrape
  // with the outbox figures. A destination seen once keeps its series: back at 0 (closed,
  // nothing held) when the catalog no longer lists it.
  const seen = new Set<string>();
  const breakerSeries = async (set: (destination: string, b: BreakerFigures | undefined) => void) => {
    try {
      const active = new Map(((await figures()).breakers ?? []).map((b) => [b.destinationId, b]));
      for (const id of active.keys()) seen.add(id);
      for (const id of seen) set(id, active.get(id));
    } catch {
      // As above.
    }
  };
  new Gauge({
    name: "whc_forward_breaker_state",
    help: "Each destination's breaker: 0 closed, 1 half_open (one held delivery on probe), 2 open (nothing sent, deliveries held)",
    labelNames: ["destination"],
    registers: [registry],
    async collect() {
      await breakerSeries((destination, b) => this.labels(destination).set(BREAKER_STATE_VALUES[b?.state ?? "closed"] ?? 0));
    },
  });
  new Gauge({
    name: "whc_forward_held",
    help: "Deliveries held per destination: its breaker is open or half-open, or it is paused; sent oldest first once it lets them go",
    labelNames: ["destination"],
    registers: [registry],
    async collect() {
      await breakerSeries((destination, b) => this.labels(destination).set(b?.held ?? 0));
    },
  });
  const waits = new Counter({
    name: "whc_forward_limiter_waits_total",
    help: "Due deliveries this process's claims moved to a later turn of their destination's rate limit",
    registers: [registry],
  });

  // Every series exists from the start, at 0, so rates over them are defined at once.
  const attemptChildren = new Map<string, ReturnType<typeof attempts.labels>>();
  for (const trigger of ATTEMPT_TRIGGERS) {
    for (const outcome of ATTEMPT_OUTCOMES) {
      const child = attempts.labels(trigger, outcome);
      child.inc(0);
      attemptChildren.set(`${trigger} ${outcome}`, child);
    }
  }
  const stateChildren = new Map(FINAL_STATES.map((s) => [s as string, deliveries.labels(s)]));
  for (const child of stateChildren.values()) child.inc(0);

  return {
    registry,
    attempt(trigger, outcome, destinationId) {
      attemptChildren.get(`${trigger} ${outcome}`)?.inc();
      destinationAttempts.labels(destinationId, outcome).inc();
    },
    finished(state, destinationId) {
      stateChildren.get(state)?.inc();
      if (stateChildren.has(state)) destinationDeliveries.labels(destinationId, state).inc();
    },
    limiterWaits(count) {
      if (count > 0) waits.inc(count);
    },
  };
}
