import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import net from "node:net";
import { needlesInFiles, waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

const PASSWORD = "pw-Inbound-7f3a9c";
const TOKEN = "tok-Inbound-51d2e8";

let t: TestSystem;
beforeAll(async () => {
  // 127.0.0.1 is a trusted proxy here: its X-Forwarded-For names the sender; 127.0.0.2 is not.
  t = await startTestSystem({ WHC_TRUSTED_PROXIES: "127.0.0.1" });
});
afterAll(async () => {
  await t.stop();
});

interface Ep {
  id: string;
  webhookUrl: string;
  rejectedCount: number;
  inbound?: Record<string, unknown>;
}

async function endpoint(inbound: Record<string, unknown>): Promise<Ep> {
  const res = await t.a.post("/v1/endpoints", { inbound });
  expect(res.status).toBe(201);
  return res.body as Ep;
}

/** A request with node:http from `localAddress`: status, headers and JSON answer. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; json: Record<string, unknown> }>((resolve, reject) => {
    const body = options.body ?? "{}";
    const req = http.request(
      url,
      { method: options.method ?? "POST", localAddress: options.localAddress ?? "127.0.0.1", headers: { "content-length": Buffer.byteLength(body), ...options.headers } },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

async function events(ep: Ep): Promise<unknown[]> {
  return (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items as unknown[];
}

async function rejectedCount(ep: Ep, expected: number): Promise<number> {
  return waitFor(async () => {
    const n = (await t.a.get(`/v1/endpoints/${ep.id}`)).body.rejectedCount as number;
    return n === expected ? n : undefined;
  }, { what: `rejectedCount ${expected}` });
}

async function metric(outcome: string): Promise<number> {
  const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
  return Number(new RegExp(`^whc_ingest_requests_total\\{outcome="${outcome}"\\} (\\S+)$`, "m").exec(text)?.[1]);
}

describe("inbound protection (design §16)", () => {
  it("shows the settings with write-only secrets, and never stores a secret in clear", async () => {
    const ep = await endpoint({ basicAuth: { username: "hooks", password: PASSWORD }, headerToken: { name: "X-Hook-Token", value: TOKEN }, allowIps: ["127.0.0.0/8", "2001:db8::/32"], methods: ["POST", "PUT"] });
    expect(ep.inbound).toEqual({
      basicAuth: { username: "hooks", passwordSet: true },
      headerToken: { name: "X-Hook-Token", valueSet: true },
      allowIps: ["127.0.0.0/8", "2001:db8::/32"],
      methods: ["POST", "PUT"],
    });
    expect(ep.rejectedCount).toBe(0);
    const read = await t.a.get(`/v1/endpoints/${ep.id}`);
    expect(JSON.stringify(read.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(read.body)).not.toContain(TOKEN);
    expect(needlesInFiles(t.dataDir, [PASSWORD, TOKEN])).toEqual([]);
    // With every part right, the capture is stored.
    const ok = await send(ep.webhookUrl, { method: "PUT", headers: { authorization: basic("hooks", PASSWORD), "x-hook-token": TOKEN } });
    expect(ok.status).toBe(200);
    expect(await events(ep)).toHaveLength(1);
  });

  it("answers 401 with the Basic challenge, then 405 with Allow, stores nothing refused, and counts each refusal", async () => {
    const ep = await endpoint({ basicAuth: { username: "hooks", password: PASSWORD }, methods: ["POST"] });
    const [authBefore, methodBefore] = [await metric("rejected_auth"), await metric("rejected_method")];
    const none = await send(ep.webhookUrl);
    const wrong = await send(ep.webhookUrl, { headers: { authorization: basic("hooks", `${PASSWORD}x`) } });
    const otherUser = await send(ep.webhookUrl, { headers: { authorization: basic("other", PASSWORD) } });
    for (const res of [none, wrong, otherUser]) {
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Basic realm="webhook"');
      expect(res.json).toMatchObject({ ok: false, error: "unauthorized" });
    }
    // Without credentials a sender learns nothing of the methods; with them, a wrong one is 405.
    expect((await send(ep.webhookUrl, { method: "GET", body: "" })).status).toBe(401);
    const get = await send(ep.webhookUrl, { method: "GET", body: "", headers: { authorization: basic("hooks", PASSWORD) } });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    expect(get.json).toMatchObject({ ok: false, error: "method_not_allowed" });
    expect(await events(ep)).toEqual([]);
    expect(await rejectedCount(ep, 5)).toBe(5);
    expect(await metric("rejected_auth")).toBe(authBefore + 4);
    expect(await metric("rejected_method")).toBe(methodBefore + 1);

    const ok = await send(ep.webhookUrl, { headers: { authorization: basic("hooks", PASSWORD) } });
    expect(ok.status).toBe(200);
    expect(await events(ep)).toHaveLength(1);
  });

  it("answers 401 without the right header token, and 200 with it", async () => {
    const ep = await endpoint({ headerToken: { name: "X-Hook-Token", value: TOKEN } });
    const missing = await send(ep.webhookUrl);
    const wrong = await send(ep.webhookUrl, { headers: { "x-hook-token": `${TOKEN.slice(0, -1)}Z` } });
    for (const res of [missing, wrong]) {
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBeUndefined();
    }
    expect((await send(ep.webhookUrl, { headers: { "X-HOOK-TOKEN": TOKEN } })).status).toBe(200);
    expect(await events(ep)).toHaveLength(1);
    expect(await rejectedCount(ep, 2)).toBe(2);
  });

  it("answers 403 from an address outside the allow list, reading X-Forwarded-For only from a trusted proxy, before the body is read", async () => {
    const ep = await endpoint({ allowIps: ["203.0.113.0/24"] });
    const before = await metric("rejected_address");
    // From the trusted proxy: the sender is the X-Forwarded-For address.
    expect((await send(ep.webhookUrl, { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(200);
    const outside = await send(ep.webhookUrl, { headers: { "x-forwarded-for": "198.51.100.4" } });
    expect(outside).toMatchObject({ status: 403, json: { ok: false, error: "forbidden" } });
    // From an untrusted peer the header is the sender's own claim: ignored.
    expect((await send(ep.webhookUrl, { localAddress: "127.0.0.2", headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(403);
    // A 10 MB body declared and not sent: the answer comes anyway.
    const { port, pathname } = new URL(ep.webhookUrl);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress: "127.0.0.2" }, () =>
        socket.write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n`),
      );
      let text = "";
      socket.on("data", (c) => {
        text += c.toString("latin1");
        if (text.includes("\r\n\r\n")) {
          socket.destroy();
          resolve(text.split("\r\n")[0] as string);
        }
      });
      socket.on("error", reject);
    });
    expect(head).toBe("HTTP/1.1 403 Forbidden");
    expect(await events(ep)).toHaveLength(1);
    expect(await rejectedCount(ep, 3)).toBe(3);
    expect(await metric("rejected_address")).toBe(before + 3);
  });

  it("is replaced by PATCH keeping a secret left out, refused without one to keep, removed with null; limits are validated", async () => {
    const ep = await endpoint({ basicAuth: { username: "hooks", password: PASSWORD } });
    const patched = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { inbound: { basicAuth: { username: "hooks" }, methods: ["POST"] } } });
    expect(patched.status).toBe(200);
    expect(patched.body.inbound).toEqual({ basicAuth: { username: "hooks", passwordSet: true }, methods: ["POST"] });
    // The kept password still opens it; ingest sees the change at once.
    expect((await send(ep.webhookUrl, { headers: { authorization: basic("hooks", PASSWORD) } })).status).toBe(200);
    expect((await send(ep.webhookUrl, { method: "PUT", headers: { authorization: basic("hooks", PASSWORD) } })).status).toBe(405);

    const noSecret = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { inbound: { headerToken: { name: "X-T" } } } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body).toMatchObject({ error: "validation_failed", details: { field: "inbound.headerToken.value", reason: "required" } });
    const created = await t.a.post("/v1/endpoints", { inbound: { basicAuth: { username: "u" } } });
    expect(created.body).toMatchObject({ error: "validation_failed", details: { field: "inbound.basicAuth.password", reason: "required" } });

    const bad: [Record<string, unknown>, string][] = [
      [{ allowIps: ["203.0.113.0/33"] }, "inbound.allowIps.0"],
      [{ allowIps: ["not an address"] }, "inbound.allowIps.0"],
      [{ allowIps: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`) }, "inbound.allowIps"],
      [{ methods: ["post"] }, "inbound.methods.0"],
      [{ basicAuth: { username: "a:b", password: "p" } }, "inbound.basicAuth.username"],
      [{ headerToken: { name: "X-T", value: "v".repeat(1025) } }, "inbound.headerToken.value"],
      [{ unknown: true }, "inbound.unknown"],
    ];
    for (const [inbound, field] of bad) {
      const res = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { inbound } });
      expect([res.status, res.body.details?.field], JSON.stringify(inbound)).toEqual([400, field]);
    }

    const removed = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { inbound: null } });
    expect(removed.body.inbound).toBeUndefined();
    expect((await send(ep.webhookUrl, { method: "PUT" })).status).toBe(200);
    // Another account cannot touch it.
    expect((await t.b.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { inbound: { methods: ["GET"] } } })).status).toBe(404);
  });
});
