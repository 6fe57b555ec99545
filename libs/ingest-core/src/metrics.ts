import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { OVERLOAD_REASONS, type OverloadReason } from "./budget.js";

const OUTCOMES = [
  "stored",
  "proxied",
  "forward_failed",
  "too_large",
  "forward_loop",
  "unknown_endpoint",
  "paused",
  "unavailable",
  "overloaded",
  "sender_gone",
  "body_timeout",
  "rejected_address",
  "rejected_auth",
  "rejected_method",
] as const;

/** How a request to the receiving surface ended. */
export type CaptureOutcome = (typeof OUTCOMES)[number];

export interface IngestMetrics {
  readonly registry: Registry;
  answered(outcome: CaptureOutcome): void;
  /** A request answered 503 overloaded: outcome `overloaded`, and which limit it would have passed. */
  overloaded(reason: OverloadReason): void;
  /** A stored capture: its provider and verdict, and the seconds from its arrival to its answer. */
  stored(provider: string, verification: string, seconds: number): void;
  /**
   * A stored capture of a proxy endpoint, answered with its destination's answer (`proxied`)
   * or with 502/504 (`forward_failed`). Its time is the destination's, so it stays out of the
   * capture duration.
   */
  proxied(provider: string, verification: string, outcome: "proxied" | "forward_failed"): void;
  /** Events in one AppendEvents call. */
  batch(events: number): void;
  /** A stored capture the catalog found to be a duplicate (design §17): stored and answered, not forwarded. */
  duplicate(): void;
  /** Serves the bytes an in-flight budget holds, and its limit, read at each scrape. */
  watchInflight(budget: { readonly limit: number; held(): number }): void;
}

/**
 * Prometheus metrics of the receiving surface, served on the process's metrics port (never on
 * the receiving port), only the whc_ingest_* series. Label values come from closed sets
 * (outcomes, providers, verdicts), never from paths or ids.
 */
export function createIngestMetrics(): IngestMetrics {
  const registry = new Registry();
  // Stored captures are counted here and handed to prom-client when it is scraped (its
  // collect()): its child counters hash their labels at every increment, which per capture was
  // half a percent of ingest's CPU. What a scrape reads is the same.
  let storedSinceScrape = 0;
  const verdictCounts = new Map<string, Map<string, { n: number }>>();
  const captures = new Counter({
    collect() {
      if (storedSinceScrape === 0) return;
      outcomes.get("stored")?.inc(storedSinceScrape);
      storedSinceScrape = 0;
    },
    name: "whc_ingest_requests_total",
    help: "Requests to webhook URLs by outcome: stored, proxied (stored, answered by the proxy destination), forward_failed (stored, proxy answered 502/504), too_large (413, metadata stored), unknown_endpoint (404), paused (503), unavailable (503, nothing stored), overloaded (503, over the in-flight byte budget or a peer's or endpoint's share of it, nothing stored), sender_gone (closed mid-body), body_timeout (408, the body stopped arriving, nothing stored), rejected_address/rejected_auth/rejected_method (403/401/405 by the endpoint's inbound protection, nothing stored)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  new Counter({
    collect() {
      for (const [provider, byVerdict] of verdictCounts) {
        for (const [verification, count] of byVerdict) {
          if (count.n === 0) continue;
          this.labels(provider, verification).inc(count.n);
          count.n = 0;
        }
      }
    },
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
  const overloads = new Counter({
    name: "whc_ingest_overloaded_total",
    help: "Requests answered 503 overloaded, by the limit they would have passed: inflight (WHC_INGEST_MAX_INFLIGHT_BYTES), peer (_PER_PEER), endpoint (_PER_ENDPOINT)",
    labelNames: ["reason"],
    registers: [registry],
  });
  const duplicates = new Counter({
    name: "whc_ingest_duplicates_total",
    help: "Stored captures the catalog found to repeat a key their endpoint deduplicates on (design §17): stored and answered, not forwarded",
    registers: [registry],
  });
  const batches = new Histogram({
    name: "whc_ingest_batch_events",
    help: "Events per AppendEvents call (group commit)",
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 512],
    registers: [registry],
  });

  // Every outcome's series exists from the start, at 0, so a rate over it is defined before
  // its first occurrence; children are looked up once, not per capture.
  const outcomes = new Map(OUTCOMES.map((o) => [o, captures.labels(o)]));
  for (const child of outcomes.values()) child.inc(0);
  const overloadReasons = new Map(OVERLOAD_REASONS.map((r) => [r, overloads.labels(r)]));
  for (const child of overloadReasons.values()) child.inc(0);
  const verdict = (provider: string, verification: string) => {
    let byVerdict = verdictCounts.get(provider);
    if (!byVerdict) verdictCounts.set(provider, (byVerdict = new Map()));
    let count = byVerdict.get(verification);
    if (!count) byVerdict.set(verification, (count = { n: 0 }));
    count.n += 1;
  };

  return {
    registry,
    answered(outcome) {
      outcomes.get(outcome)?.inc();
    },
    overloaded(reason) {
      outcomes.get("overloaded")?.inc();
      overloadReasons.get(reason)?.inc();
    },
    stored(provider, verification, seconds) {
      storedSinceScrape += 1;
      verdict(provider, verification);
      duration.observe(seconds);
    },
    proxied(provider, verification, outcome) {
      outcomes.get(outcome)?.inc();
      verdict(provider, verification);
    },
    batch(events) {
      batches.observe(events);
    },
    duplicate() {
      duplicates.inc();
    },
    watchInflight(budget) {
      new Gauge({
        name: "whc_ingest_inflight_body_bytes",
        help: "Request-body bytes reserved by requests in flight (WHC_INGEST_MAX_INFLIGHT_BYTES bounds it)",
        registers: [registry],
        collect() {
          this.set(budget.held());
        },
      });
      new Gauge({
        name: "whc_ingest_inflight_body_bytes_limit",
        help: "WHC_INGEST_MAX_INFLIGHT_BYTES",
        registers: [registry],
      }).set(budget.limit);
    },
  };
}
