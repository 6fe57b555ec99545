import { describe, it, expect } from "vitest";
import { buildApps, startNode, tempDir } from "@whc/testing";

describe("gateway start-up", () => {
  it("stops on bad configuration with one line naming the variable", async () => {
    const { "gateway": main } = buildApps("gateway");
    const dir = tempDir();
    try {
      const proc = startNode(main!, { WHC_DATA_DIR: dir.path, WHC_GATEWAY_PORT: "not-a-port" });
      const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
      expect(code).toBe(1);
      const lines = proc.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("WHC_GATEWAY_PORT");
    } finally {
      dir.remove();
    }
  });
});
