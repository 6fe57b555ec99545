import { describe, expect, it } from "vitest";
import { createIngestMetrics } from "./metrics.js";

/** A series' value in the registry's exposition, or undefined when it has none. */
async function value(metrics: ReturnType<typeof createIngestMetrics>, series: string): Promise<number | undefined> {
  const line = (await metrics.registry.metrics()).split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("ingest metrics", () => {
  it("count stored captures by outcome and verdict at every scrape, however the captures fall between scrapes", async () => {
    const metrics = createIngestMetrics();
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="stored"}')).toBe(0);
    expect(await value(metrics, 'whc_ingest_verifications_total{provider="stripe",verification="verified"}')).toBeUndefined();
    metrics.stored("stripe", "verified", 0.001);
    metrics.stored("stripe", "verified", 0.002);
    metrics.stored("github", "failed", 0.003);
    metrics.answered("paused");
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="stored"}')).toBe(3);
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="paused"}')).toBe(1);
    expect(await value(metrics, 'whc_ingest_verifications_total{provider="stripe",verification="verified"}')).toBe(2);
    expect(await value(metrics, 'whc_ingest_verifications_total{provider="github",verification="failed"}')).toBe(1);
    expect(await value(metrics, "whc_ingest_capture_duration_seconds_count")).toBe(3);
    // A scrape without captures since reads the same; more captures add to it.
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="stored"}')).toBe(3);
    metrics.stored("stripe", "verified", 0.001);
    metrics.proxied("stripe", "verified", "proxied");
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="stored"}')).toBe(4);
    expect(await value(metrics, 'whc_ingest_requests_total{outcome="proxied"}')).toBe(1);
    expect(await value(metrics, 'whc_ingest_verifications_total{provider="stripe",verification="verified"}')).toBe(4);
  });
});
