import { describe, it, expect } from "vitest";
import { buildApps, startNode, tempDir } from "@whc/testing";

describe("crypto start-up", () => {
  it("stops on bad configuration with one line naming the variable", async () => {
    const { "crypto": main } = buildApps("crypto");
    const dir = tempDir();
    try {
      const proc = startNode(main!, { WHC_DATA_DIR: dir.path, WHC_CRYPTO_PORT: "not-a-port" });
      const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
      expect(code).toBe(1);
      const lines = proc.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("WHC_CRYPTO_PORT");
    } finally {
      dir.remove();
    }
  });
});
