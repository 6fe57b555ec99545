import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/*
 * Design §14 in the all-in-one process, as a tenant (and an anonymous sender) would meet it:
 * forwards that loop stop at WHC_MAX_HOPS, a destination that is the deployment's own webhook
 * URL is refused when saved, and a destination no socket may reach (the kernel refuses a
 * broadcast address at once, before anything is sent) ends as a recorded outcome: the process
 * serves on.
 */

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_POLL_MS: "50", WHC_FORWARD_RETRY_BASE_MS: "50" });
});
afterAll(async () => {
  await t.stop();
});

interface Ep {
  id: string;
  webhookUrl: string;
}

/** The same webhook URL as another host would spell it (localhost for 127.0.0.1): not the deployment's public form, so the save-time check lets it through. */
const respelled = (ep: Ep) => ep.webhookUrl.replace("127.0.0.1", "localhost");

async function events(ep: Ep) {
  return (await t.a.get(`/v1/endpoints/${ep.id}/events?limit=200`)).body as { items: { id: string; responseCode: number }[] };
}

async function detail(ep: Ep, id: string) {
  return (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body as { headers: Record<string, string[]>; forwardedResponse: { state?: string } };
}

describe("forward loops (design §14)", () => {
  it("refuses a destination that is one of the deployment's own webhook URLs when it is saved", async () => {
    const target = (await t.a.post("/v1/endpoints", {})).body as Ep;
    for (const url of [target.webhookUrl, `${target.webhookUrl}/sub?x=1`]) {
      const res = await t.a.call("POST", "/v1/endpoints", { json: { operatingMode: "relay", forward: { url } } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: "validation_failed", details: { field: "forward.url", reason: "loop" } });
    }
    const other = (await t.a.post("/v1/endpoints", {})).body as Ep;
    const patched = await t.a.call("PATCH", `/v1/endpoints/${other.id}`, { json: { operatingMode: "relay", forward: { url: target.webhookUrl } } });
    expect(patched.body).toMatchObject({ error: "validation_failed", details: { field: "forward.url", reason: "loop" } });
  });

  it("stops a relay forwarding to itself at the hop limit: every capture stored, the last answered 508 and not forwarded", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as Ep;
    const patched = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { operatingMode: "relay", forward: { url: respelled(ep) } } });
    expect(patched.status).toBe(200);
    const sent = await fetch(ep.webhookUrl, { method: "POST", body: '{"n":1}' });
    expect(sent.status).toBe(200);
    // The sender's capture (hop 0), then forwards carrying hops 1, 2 and 3; the third is 508.
    const page = await vi.waitFor(
      async () => {
        const page = await events(ep);
        if (!page.items.some((e) => e.responseCode === 508)) throw new Error(`${page.items.length} captures, none 508 yet`);
        return page;
      },
      { timeout: 15_000, interval: 50 },
    );
    await new Promise((r) => setTimeout(r, 500));
    const settled = await events(ep);
    expect(settled.items).toHaveLength(page.items.length);
    expect(settled.items.map((e) => e.responseCode).sort()).toEqual([200, 200, 200, 508]);
    const looped = settled.items.find((e) => e.responseCode === 508)!;
    const stopped = await detail(ep, looped.id);
    expect(stopped.headers["X-Whc-Hop"] ?? stopped.headers["x-whc-hop"]).toEqual(["3"]);
    // Stored as it came, and never forwarded.
    expect(stopped.forwardedResponse).toEqual({});
  });

  it("stops a loop of two endpoints too", async () => {
    const a = (await t.a.post("/v1/endpoints", {})).body as Ep;
    const b = (await t.a.post("/v1/endpoints", {})).body as Ep;
    await t.a.call("PATCH", `/v1/endpoints/${a.id}`, { json: { operatingMode: "relay", forward: { url: respelled(b) } } });
    await t.a.call("PATCH", `/v1/endpoints/${b.id}`, { json: { operatingMode: "relay", forward: { url: respelled(a) } } });
    expect((await fetch(a.webhookUrl, { method: "POST", body: "ping" })).status).toBe(200);
    await vi.waitFor(
      async () => {
        const codes = [...(await events(a)).items, ...(await events(b)).items].map((e) => e.responseCode);
        if (!codes.includes(508)) throw new Error("no 508 yet");
      },
      { timeout: 15_000, interval: 50 },
    );
    await new Promise((r) => setTimeout(r, 500));
    const all = [...(await events(a)).items, ...(await events(b)).items];
    // a (hop 0) -> b (1) -> a (2) -> b (3, 508): four captures, and nothing after.
    expect(all).toHaveLength(4);
    expect(all.filter((e) => e.responseCode === 508)).toHaveLength(1);
  });
});

describe("a destination no socket may reach (design §14)", () => {
  it("answers a proxy's sender 502 forward_failed, records the attempt, and the process serves on", async () => {
    const ep = (await t.a.post("/v1/endpoints", { operatingMode: "proxy", forward: { url: "http://255.255.255.255:9/hook", timeoutMs: 1000 } })).body as Ep;
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "x" });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: "forward_failed", reason: "host_unreachable" });
    const [stored] = (await events(ep)).items;
    await vi.waitFor(async () => expect((await detail(ep, stored!.id)).forwardedResponse).toMatchObject({ state: "failed" }), { timeout: 5000 });
    // Still up: an unrelated capture and an API call are served.
    const other = (await t.a.post("/v1/endpoints", {})).body as Ep;
    expect((await fetch(other.webhookUrl, { method: "POST", body: "y" })).status).toBe(200);
  });

  it("records a relay's attempts as host_unreachable until exhausted, and a replay as a network_error", async () => {
    const ep = (await t.a.post("/v1/endpoints", { operatingMode: "relay", forward: { url: "http://255.255.255.255:9/hook", maxAttempts: 2 } })).body as Ep;
    expect((await fetch(ep.webhookUrl, { method: "POST", body: "x" })).status).toBe(200);
    const [stored] = (await events(ep)).items;
    await vi.waitFor(async () => expect((await detail(ep, stored!.id)).forwardedResponse).toMatchObject({ state: "exhausted" }), { timeout: 10_000, interval: 50 });
    const replay = await t.a.call("POST", `/v1/endpoints/${ep.id}/events/${stored!.id}/replay`, { json: { target_url: "http://255.255.255.255:9/" } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ result: "network_error", network_failure_reason: "host_unreachable" });
  });

  it("answers a replay to a name that does not resolve 200 network_error dns_failure, and saves such a destination with a warning", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as Ep;
    const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "x" })).json()) as { id: string };
    const replay = await t.a.call("POST", `/v1/endpoints/${ep.id}/events/${id}/replay`, { json: { target_url: "http://does-not-resolve.invalid/" } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ result: "network_error", network_failure_reason: "dns_failure" });
    const saved = await t.a.call("POST", "/v1/endpoints", { json: { operatingMode: "relay", forward: { url: "https://does-not-resolve.invalid/hooks" } } });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ warnings: [{ code: "dns_failure" }] });
  });

  it("refuses the deployment's own internal services even with private targets allowed (reason port)", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as Ep;
    const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "x" })).json()) as { id: string };
    for (const target of ["http://127.0.0.1:50051/webhookcapture.catalog.v1.CatalogService/ListEndpoints", "http://localhost:50052/", "http://127.0.0.1:50053/"]) {
      const res = await t.a.call("POST", `/v1/endpoints/${ep.id}/events/${id}/replay`, { json: { target_url: target } });
      expect({ target, status: res.status, body: res.body }).toMatchObject({ target, status: 400, body: { error: "target_not_allowed", details: { reason: "port" } } });
    }
    const saved = await t.a.call("POST", "/v1/endpoints", { json: { operatingMode: "relay", forward: { url: "http://127.0.0.1:50051/" } } });
    expect(saved.body).toMatchObject({ error: "target_not_allowed", details: { reason: "port" } });
  });

  it("refuses a private target without WHC_REPLAY_ALLOW_PRIVATE_TARGETS with target_not_allowed and its reason", async () => {
    const strict = await startTestSystem();
    try {
      const ep = (await strict.a.post("/v1/endpoints", {})).body as Ep;
      const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "x" })).json()) as { id: string };
      for (const [target, reason] of [
        ["http://127.0.0.1:9/", "loopback"],
        ["http://10.1.2.3/", "private_address"],
        ["http://169.254.169.254/latest/meta-data", "metadata"],
        ["http://169.254.10.10/", "link_local"],
        ["ftp://example.com/", "scheme"],
        ["http://user:pw@example.com/", "credentials"],
      ] as const) {
        const res = await strict.a.call("POST", `/v1/endpoints/${ep.id}/events/${id}/replay`, { json: { target_url: target } });
        expect({ target, status: res.status, body: res.body }).toMatchObject({
          target,
          status: 400,
          body: { error: "target_not_allowed", details: { reason }, message: expect.stringContaining("WHC_REPLAY_ALLOW_PRIVATE_TARGETS") },
        });
      }
    } finally {
      await strict.stop();
    }
  });
});
