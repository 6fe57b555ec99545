import { describe, expect, it } from "vitest";
import { createLogger } from "@whc/logging";
import { waitFor } from "@whc/testing";
import { createReadiness, watchDependencies } from "./readiness.js";

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("test", "info", { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe("readiness", () => {
  it("names every dependency down, in order, whether its check says no, throws or hangs up", async () => {
    const readiness = createReadiness({
      catalog: () => true,
      crypto: async () => false,
      replay: () => {
        throw Object.assign(new Error("gone"), { reason: "service_unavailable" });
      },
      nats: async () => true,
    });
    expect(await readiness.check()).toEqual({
      status: "unavailable",
      checks: { catalog: "ok", crypto: "down", replay: "down", nats: "ok" },
      failing: ["crypto", "replay"],
    });
    expect(readiness.reasons()).toEqual({ crypto: "not serving", replay: "service_unavailable" });
    expect(await createReadiness({ catalog: () => true }).check()).toEqual({ status: "ok", checks: { catalog: "ok" }, failing: [] });
  });

  it("logs a warning naming a dependency at every check while it is down, and once when it is back", async () => {
    let natsUp = false;
    const { logger, lines } = capturedLogger();
    const watch = watchDependencies(createReadiness({ catalog: () => true, nats: () => natsUp }), logger, 20);
    try {
      await waitFor(() => lines.filter((l) => l.msg === "dependency down: nats").length >= 3 || undefined, { what: "three warnings" });
      const warning = lines.find((l) => l.msg === "dependency down: nats")!;
      expect(warning).toMatchObject({ level: 40, dependency: "nats", reason: "not serving" });
      expect(lines.some((l) => l.dependency === "catalog")).toBe(false);
      natsUp = true;
      await waitFor(() => lines.some((l) => l.msg === "dependency back: nats") || undefined, { what: "back" });
      const count = lines.length;
      await new Promise((r) => setTimeout(r, 100));
      expect(lines.slice(count).filter((l) => l.msg === "dependency down: nats")).toEqual([]);
    } finally {
      await watch.close();
    }
  });
});
