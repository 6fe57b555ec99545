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
