import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.shutdown();
});

describe("durable acknowledgements", () => {
  it("every capture answered 2xx survives a SIGKILL of the catalog; the others were told 503", async () => {
    const ep = (await cluster.api.post("/v1/endpoints", { slug: "steady" })).body as { id: string; webhookUrl: string };
    const acked: string[] = [];
    const refused: number[] = [];
    let running = true;
    let sent = 0;

    // Four senders in a steady stream, like a provider retrying on anything but 2xx.
    const sender = async () => {
      while (running) {
        sent += 1;
        try {
          const res = await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${sent}}`, signal: AbortSignal.timeout(15_000) });
          if (res.status === 200) acked.push(((await res.json()) as { id: string }).id);
          else {
            expect(res.status).toBe(503);
            expect(res.headers.get("retry-after")).toBeTruthy();
            refused.push(res.status);
            await res.arrayBuffer();
          }
        } catch {
          refused.push(0);
        }
      }
    };
    const senders = Array.from({ length: 4 }, sender);

    await new Promise((r) => setTimeout(r, 700));
    expect(await cluster.stop("catalog", "SIGKILL")).toBe(null);
    await new Promise((r) => setTimeout(r, 1000));
    await cluster.start("catalog");
    await new Promise((r) => setTimeout(r, 1000));
    running = false;
    await Promise.all(senders);

    expect(acked.length).toBeGreaterThan(20);
    expect(refused.length).toBeGreaterThan(0);
    const stored = new Set<string>();
    let before = "";
    for (;;) {
      const page = await cluster.api.get(`/v1/endpoints/${ep.id}/events?limit=200${before}`);
      for (const item of page.body.items as { id: string }[]) stored.add(item.id);
      if (!page.body.nextBefore) break;
      before = `&before=${encodeURIComponent(page.body.nextBefore)}&beforeId=${page.body.nextBeforeId}`;
    }
    const lost = acked.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
  }, 60_000);
});
