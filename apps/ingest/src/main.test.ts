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
});
