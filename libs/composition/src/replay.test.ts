import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import Stripe from "stripe";
import { startTestSystem, type TestSystem } from "./testing/index.js";

const run = promisify(execFile);

interface Received {
  method: string;
  url: string;
  headers: [string, string][];
  body: Buffer;
}

/** A real local HTTP server that records what it gets and answers as told. */
async function target(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, r) => r.end("thanks")) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      received.push({ method: req.method!, url: req.url!, headers, body: Buffer.concat(chunks) });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => server.close() };
}

let t: TestSystem;
beforeAll(async () => {
  // Replays here go to local servers, so private targets are allowed in this system.
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_REPLAY_DAILY_LIMIT: "8" });
});
afterAll(async () => {
  await t.stop();
});

async function capture(body: Record<string, unknown> = {}, request: RequestInit & { path?: string } = {}) {
  const ep = (await t.a.post("/v1/endpoints", body)).body as { id: string; webhookUrl: string };
  const res = await fetch(`${ep.webhookUrl}${request.path ?? ""}`, { method: "POST", ...request });
  const { id } = (await res.json()) as { id: string };
  return { ep, id };
}

describe("replay (operation 9)", () => {
  it("replays exactly: method, headers and body bytes as captured", async () => {
    const body = Buffer.concat([Buffer.from('{"x":1}'), Buffer.from([0, 255, 13, 10])]);
    const { ep, id } = await capture({}, {
      method: "PUT",
      headers: { "content-type": "application/json", "x-custom": "keep me", "x-forwarded-for": "203.0.113.1" },
      body,
    });
    const sink = await target();
    const res = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: `${sink.url}/in?z=1` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "delivered", target_status: 200, mode: "exact", event_id: id, source_body_truncated: false });
    expect(Buffer.from(res.body.response_excerpt_base64, "base64").toString()).toBe("thanks");
    expect(res.body.audit_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("ratelimit-limit")).toBe("8");
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThan(8);
    const got = sink.received[0]!;
    expect(got.method).toBe("PUT");
    expect(got.url).toBe("/in?z=1");
    expect(got.body.equals(body)).toBe(true);
    expect(got.headers).toContainEqual(["x-custom", "keep me"]);
    expect(got.headers.map(([n]) => n.toLowerCase())).not.toContain("x-forwarded-for");
    sink.close();
  });

  it("re-signs with target_secret so that stripe's library verifies it", async () => {
    const payload = JSON.stringify({ id: "evt_9", object: "event", type: "payout.paid" });
    const stripe = new Stripe("sk_test_x");
    const { ep, id } = await capture(
      { provider: "stripe", secret: "whsec_source" },
      { headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" }) }, body: payload },
    );
    const sink = await target();
    const res = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: sink.url, target_secret: "whsec_target" });
    expect(res.body).toMatchObject({ result: "delivered", mode: "resign" });
    const got = sink.received[0]!;
    const sig = got.headers.filter(([n]) => n.toLowerCase() === "stripe-signature");
    expect(sig).toHaveLength(1);
    expect(stripe.webhooks.constructEvent(got.body, sig[0]![1], "whsec_target").type).toBe("payout.paid");
    expect(() => stripe.webhooks.constructEvent(got.body, sig[0]![1], "whsec_source")).toThrow();
    sink.close();
  });

  it("reports rejections and network failures as outcomes", async () => {
    const { ep, id } = await capture({}, { body: "x" });
    const failing = await target((_q, r) => {
      r.statusCode = 500;
      r.end("boom");
    });
    expect((await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: failing.url })).body).toMatchObject({
      result: "rejected",
      target_status: 500,
    });
    failing.close();
    await new Promise((r) => setTimeout(r, 50));
    const refused = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: failing.url });
    expect(refused.body).toMatchObject({ result: "network_error", network_failure_reason: "connection_refused" });
    expect(refused.body.target_status).toBeUndefined();
  });

  it("honours replayFromApi whatever the headers and, for the dashboard's session (a key with scope dashboard), replayFromDashboard", async () => {
    const { ep, id } = await capture({ replayFromApi: false }, { body: "x" });
    const sink = await target();
    const refused = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: sink.url });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("replay_disabled");
    const claimed = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: sink.url }, { headers: { "x-whc-client": "dashboard" } });
    expect(claimed.body.error).toBe("replay_disabled");
    const session = (await t.a.post("/v1/keys", { name: "dashboard session", scopes: ["dashboard"] })).body as { key: string };
    const fromDashboard = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: sink.url }, { key: session.key });
    expect(fromDashboard.body.result).toBe("delivered");
    expect(sink.received).toHaveLength(1);
    sink.close();
  });

  it("validates the request", async () => {
    const { ep, id } = await capture({}, { body: "x" });
    for (const [body, field, reason] of [
      [{}, "target_url", "required"],
      [{ target_url: "" }, "target_url", "length"],
      [{ target_url: "http://x.test", mode: "loud" }, "mode", "format"],
      [{ target_url: "http://x.test", extra: 1 }, "extra", "unknown"],
    ] as const) {
      const res = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, body);
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ field, reason });
    }
    const resignWithoutSecret = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: "http://x.test", mode: "resign" });
    expect(resignWithoutSecret.body.details).toEqual({ field: "target_secret", reason: "required" });
  });
});

describe("cURL export (operation 8)", () => {
  it("masks by default and, run by bash and curl, delivers the original body bytes", async () => {
    const body = Buffer.from("line1\r\nit's $(not run) `nor this`\u0000end");
    const { ep, id } = await capture({}, { headers: { authorization: "Bearer sekrit", "x-trace": "t1" }, body, path: "/sub?q=1" });
    const masked = await t.a.get(`/v1/endpoints/${ep.id}/events/${id}/curl`);
    expect(masked.body).toMatchObject({ byteIdentical: true, bodyOmitted: false, headersMasked: true });
    expect(masked.body.command).not.toContain("sekrit");
    expect(masked.body.command).toContain(`${ep.webhookUrl}/sub?q=1`);
    const unmasked = await t.a.get(`/v1/endpoints/${ep.id}/events/${id}/curl?unmasked=true`);
    expect(unmasked.body.command).toContain("sekrit");

    const sink = await target();
    const command = (unmasked.body.command as string).replace(ep.webhookUrl, sink.url);
    await run("bash", ["-c", `${command} --silent --max-time 5 -o /dev/null`]);
    expect(sink.received[0]!.body.equals(body)).toBe(true);
    expect(sink.received[0]!.url).toBe("/sub?q=1");
    sink.close();
  });

  it("flags a metadata-only event's body as omitted", async () => {
    const { ep, id } = await capture({ operatingMode: "metadata_only" }, { body: "gone" });
    const res = await t.a.get(`/v1/endpoints/${ep.id}/events/${id}/curl`);
    expect(res.body).toMatchObject({ bodyOmitted: true, byteIdentical: false });
  });
});

describe("replay safety", () => {
  let guarded: TestSystem;
  beforeAll(async () => {
    guarded = await startTestSystem({ WHC_REPLAY_DAILY_LIMIT: "2" });
  });
  afterAll(async () => {
    await guarded.stop();
  });

  it("refuses loopback targets in every spelling and sends nothing, charging nothing", async () => {
    const ep = (await guarded.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "x" })).json()) as { id: string };
    const trap = await target();
    const port = new URL(trap.url).port;
    for (const host of ["127.0.0.1", "localhost", "[::1]", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]"]) {
      const res = await guarded.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: `http://${host}:${port}/` });
      expect(res.status, host).toBe(400);
      expect(res.body.error).toBe("target_not_allowed");
      expect(res.headers.get("ratelimit-limit")).toBeNull();
    }
    expect(trap.received).toEqual([]);
    trap.close();
  });

  it("answers 429 with Retry-After to the next UTC midnight once the allowance is spent", async () => {
    const allowing = await startTestSystem({ WHC_REPLAY_DAILY_LIMIT: "2", WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true" });
    try {
      const ep = (await allowing.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
      const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "x" })).json()) as { id: string };
      const sink = await target();
      const path = `/v1/endpoints/${ep.id}/events/${id}/replay`;
      expect((await allowing.a.post(path, { target_url: sink.url })).headers.get("ratelimit-remaining")).toBe("1");
      expect((await allowing.a.post(path, { target_url: sink.url })).headers.get("ratelimit-remaining")).toBe("0");
      const refused = await allowing.a.post(path, { target_url: sink.url });
      const now = Date.now();
      const toMidnight = Math.ceil((Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000 - now) / 1000);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe("replay_limit_exceeded");
      expect(Math.abs(Number(refused.headers.get("retry-after")) - toMidnight)).toBeLessThanOrEqual(2);
      expect(refused.headers.get("ratelimit-reset")).toBe(refused.headers.get("retry-after"));
      expect(refused.headers.get("ratelimit-limit")).toBe("2");
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
      expect(sink.received).toHaveLength(2);
      // The other account has its own allowance.
      sink.close();
    } finally {
      await allowing.stop();
    }
  });
});
