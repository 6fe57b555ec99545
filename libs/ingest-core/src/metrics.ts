import { Counter, Histogram, Registry, collectDefaultMetrics, type Counter as CounterType } from "prom-client";

/** How a request to the receiving surface ended. */
export type CaptureOutcome =
  | "stored"
  | "too_large"
  | "unknown_endpoint"
  | "paused"
  | "unavailable"
  | "sender_gone";

export interface IngestMetrics {
  readonly registry: Registry;
  answered(outcome: CaptureOutcome): void;
  /** A stored capture: its provider and verdict, and the seconds from its arrival to its answer. */
  stored(provider: string, verification: string, seconds: number): void;
  /** Events in one AppendEvents call. */
  batch(events: number): void;
}

/**
 * Prometheus metrics of the receiving surface, served at its `/metrics`. Label values come
 * from closed sets (outcomes, providers, verdicts), never from paths or ids. Children are
 * looked up once and kept: a capture costs a few increments, not label hashing.
 */
export function createIngestMetrics(): IngestMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const captures = new Counter({
    name: "whc_ingest_requests_total",
    help: "Requests to webhook URLs by outcome: stored, too_large (413, metadata stored), unknown_endpoint (404), paused (503), unavailable (503, nothing stored), sender_gone (closed mid-body)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const verdicts = new Counter({
    name: "whc_ingest_verifications_total",
    help: "Stored captures by provider and signature verdict",
    labelNames: ["provider", "verification"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "whc_ingest_capture_duration_seconds",
    help: "From a request's arrival to its 2xx, durable commit included",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const batches = new Histogram({
    name: "whc_ingest_batch_events",
    help: "Events per AppendEvents call (group commit)",
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 512],
    registers: [registry],
  });

  const outcomes = new Map<string, ReturnType<CounterType["labels"]>>();
  const verdictChildren = new Map<string, ReturnType<CounterType["labels"]>>();
  const child = (cache: Map<string, ReturnType<CounterType["labels"]>>, key: string, make: () => ReturnType<CounterType["labels"]>) => {
    let c = cache.get(key);
    if (!c) {
      c = make();
      cache.set(key, c);
    }
    return c;
  };

  return {
    registry,
    answered(outcome) {
      child(outcomes, outcome, () => captures.labels(outcome)).inc();
    },
    stored(provider, verification, seconds) {
      child(outcomes, "stored", () => captures.labels("stored")).inc();
      child(verdictChildren, `${provider} ${verification}`, () => verdicts.labels(provider, verification)).inc();
      duration.observe(seconds);
    },
    batch(events) {
      batches.observe(events);
    },
  };
}
