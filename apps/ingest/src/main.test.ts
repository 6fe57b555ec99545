import { describe, it, expect } from "vitest";
import { startWithBadConfig, tempDir } from "@whc/testing";

describe("ingest start-up", () => {
  it("stops on bad configuration with one line naming the variable", async () => {
    const dir = tempDir();
    try {
      const { code, lines } = await startWithBadConfig("ingest", "WHC_INGEST_PORT", "not-a-port", dir.path);
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("WHC_INGEST_PORT");
    } finally {
      dir.remove();
    }
  });

  it("reads the shares of the in-flight budget: one below the largest inbound body stops it, naming the variable", async () => {
    const dir = tempDir();
    try {
      const { code, lines } = await startWithBadConfig("ingest", "WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER", "1000", dir.path, { WHC_MAX_INBOUND_BODY_BYTES: "5000" });
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER must be at least WHC_MAX_INBOUND_BODY_BYTES (5000)");
    } finally {
      dir.remove();
    }
  });

  it("stops on a malformed OpenTelemetry endpoint with one line naming it", async () => {
    const dir = tempDir();
    try {
      const { code, lines } = await startWithBadConfig("ingest", "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", dir.path, {
        WHC_INTERNAL_TOKEN: "t".repeat(32),
      });
      expect(code).toBe(1);
      expect(lines).toEqual(["ingest: configuration error: OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL"]);
    } finally {
      dir.remove();
    }
  });
});
