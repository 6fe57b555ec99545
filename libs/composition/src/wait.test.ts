import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

async function endpoint() {
  return (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
}

describe("long-poll wait", () => {
  it("holds an empty page and answers within 200 ms of a capture", async () => {
    const ep = await endpoint();
    const started = Date.now();
    const pending = t.a.get(`/v1/endpoints/${ep.id}/events?wait=10`);
    await new Promise((r) => setTimeout(r, 300));
    const sent = await fetch(ep.webhookUrl, { method: "POST", body: "wake up" });
    const ackedAt = Date.now();
    const { id } = (await sent.json()) as { id: string };
    const res = await pending;
    const answeredAt = Date.now();
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(ackedAt - started).toBeGreaterThanOrEqual(300);
    expect(answeredAt - ackedAt).toBeLessThan(200);
  });

  it("wakes a client polling forward with after/afterId", async () => {
    const ep = await endpoint();
    const first = (await (await fetch(ep.webhookUrl, { method: "POST", body: "1" })).json()) as { id: string };
    const page = await t.a.get(`/v1/endpoints/${ep.id}/events`);
    expect(page.body.nextAfterId).toBe(first.id);
    const pending = t.a.get(
      `/v1/endpoints/${ep.id}/events?wait=10s&after=${encodeURIComponent(page.body.nextAfter)}&afterId=${page.body.nextAfterId}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const second = (await (await fetch(ep.webhookUrl, { method: "POST", body: "2" })).json()) as { id: string };
    const res = await pending;
    expect(res.body.items.map((e: { id: string }) => e.id)).toEqual([second.id]);
    expect(res.body.nextAfterId).toBe(second.id);
  });

  it("answers an empty page when the time runs out, echoing the after cursor", async () => {
    const ep = await endpoint();
    const after = new Date().toISOString();
    const afterId = "01a20000-0000-7000-8000-000000000000";
    const started = Date.now();
    const res = await t.a.get(`/v1/endpoints/${ep.id}/events?wait=1&after=${after}&afterId=${afterId}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(res.body).toEqual({ items: [], nextAfter: after, nextAfterId: afterId });
  });

  it("answers at once when the page is not empty", async () => {
    const ep = await endpoint();
    await fetch(ep.webhookUrl, { method: "POST", body: "x" });
    const started = Date.now();
    const res = await t.a.get(`/v1/endpoints/${ep.id}/events?wait=30`);
    expect(res.body.items).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("shutdown", () => {
  it("answers held long polls and finishes in-flight requests before closing", async () => {
    const s = await startTestSystem();
    const ep = (await s.a.post("/v1/endpoints", {})).body as { id: string };
    const held = s.a.get(`/v1/endpoints/${ep.id}/events?wait=60`);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await s.stop();
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
