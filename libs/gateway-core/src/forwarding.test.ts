import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  LISTEN_DESTINATION_ID,
  ATTEMPT_HEADER,
  DELIVERY_ID_HEADER,
  type ApiClient,
  type ApiError,
  type CreateEndpointRequest,
  type ForwardedResponseJson,
  type UpdateEndpointRequest,
} from "@whc/api-model";
import { createEnvelopeSealer } from "@whc/sealing";
import { createOpenApiValidator } from "@whc/testing";
import { errorTable } from "./errors-table.js";
import { refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

const UNKNOWN_ID = "01a20000-0000-7000-8000-000000000000";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A forward destination on loopback: keeps what it receives, answers 200 with a small text. */
async function startDestination() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "text/plain", "x-dest": "yes" }).end(`got ${received.length}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function expectReply(err: ApiError, status: number, code: keyof typeof errorTable) {
  expect([err.status, err.code, err.message]).toEqual([status, code, errorTable[code].message]);
  expect(err.headers?.get("x-request-id")).toBe(err.requestId);
}

let t: TestGateway;
let dest: Awaited<ReturnType<typeof startDestination>>;
let validate: ReturnType<typeof createOpenApiValidator>;
let owner: TestAccount;
/** The owner's client; every answer it gets is checked against the served OpenAPI document. */
let api: ApiClient;

/** A fetch that checks each answer (status, headers, body) against the OpenAPI document, and keeps the last. */
function validatingFetch(): { fetch: typeof fetch; last(): Response } {
  let last: Response | undefined;
  return {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      const text = await res.clone().text();
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      validate(init?.method ?? "GET", url, res.status, res.headers, text ? (JSON.parse(text) as unknown) : undefined);
      return (last = res);
    },
    last() {
      if (!last) throw new Error("no call made yet");
      return last;
    },
  };
}

beforeAll(async () => {
  [t, dest] = await Promise.all([startTestGateway(), startDestination()]);
  validate = createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, unknown>);
  owner = await t.account();
  api = t.client(owner.key, { fetch: validatingFetch().fetch });
});
afterAll(async () => {
  await Promise.all([t.close(), dest.close()]);
});

/** The first destination's target secret as the catalog holds it: sealed with the others (design §17). */
async function sealedTargetSecret(endpointId: string): Promise<string | undefined> {
  const held = await t.catalog.getEndpoint({ accountId: owner.accountId, endpointId, includeSealedSecret: true });
  const sealed = held.endpoint!.sealedDestinationSecrets;
  if (sealed.length === 0) return undefined;
  const secrets = JSON.parse(Buffer.from((await t.crypto.openSecret({ sealed })).plaintext).toString("utf8")) as Record<string, string>;
  const [first] = JSON.parse(held.endpoint!.forwardJson) as { id: string }[];
  return secrets[first!.id];
}

describe("an endpoint's forward settings", () => {
  it("are taken on create with their defaults, the target secret write-only and sealed like the endpoint secret", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", forward: { url: `${dest.url}/hooks`, targetSecret: "whsec_dGFyZ2V0" } });
    expect(ep.operatingMode).toBe("relay");
    expect(ep.forward).toEqual({ url: `${dest.url}/hooks`, keepPath: true, timeoutMs: 10_000, maxAttempts: 6, targetSecretSet: true });
    expect(JSON.stringify(ep)).not.toContain("whsec_");
    expect(await api.endpoints.get(ep.id)).toEqual(ep);
    const held = await t.catalog.getEndpoint({ accountId: owner.accountId, endpointId: ep.id, includeSealedSecret: true });
    expect(held.endpoint!.forwardJson).not.toContain("whsec_");
    expect(Buffer.from(held.endpoint!.sealedTargetSecret).toString("utf8")).not.toContain("whsec_");
    expect(await sealedTargetSecret(ep.id)).toBe("whsec_dGFyZ2V0");

    const proxy = await api.endpoints.create({
      operatingMode: "proxy",
      forward: { url: dest.url, keepPath: false, timeoutMs: 2000, maxAttempts: 1 },
    });
    expect(proxy.forward).toEqual({ url: dest.url, keepPath: false, timeoutMs: 2000, maxAttempts: 1, targetSecretSet: false });
    // A capture endpoint may keep settings (redeliver and a later switch to relay use them); without, none shown.
    expect((await api.endpoints.create({ forward: { url: dest.url } })).forward?.url).toBe(dest.url);
    expect((await api.endpoints.create({})).forward).toBeUndefined();
  });

  it("name the field and the reason of each validation failure, and store nothing", async () => {
    const before = (await api.endpoints.list()).items.length;
    const url = `${dest.url}/hooks`;
    const cases: [CreateEndpointRequest, string, string][] = [
      [{ operatingMode: "relay" }, "forward", "required"],
      [{ operatingMode: "proxy" }, "forward", "required"],
      [{ operatingMode: "relay", forward: {} as never }, "forward.url", "required"],
      [{ forward: { url: "" } }, "forward.url", "length"],
      [{ forward: { url: `${url}/${"x".repeat(2048)}` } }, "forward.url", "length"],
      [{ forward: { url, timeoutMs: 99 } }, "forward.timeoutMs", "range"],
      [{ forward: { url, timeoutMs: 60_001 } }, "forward.timeoutMs", "range"],
      [{ forward: { url, timeoutMs: 1.5 } }, "forward.timeoutMs", "type"],
      [{ forward: { url, maxAttempts: 0 } }, "forward.maxAttempts", "range"],
      [{ forward: { url, maxAttempts: 21 } }, "forward.maxAttempts", "range"],
      [{ forward: { url, keepPath: "yes" as never } }, "forward.keepPath", "type"],
      [{ forward: { url, targetSecret: "" } }, "forward.targetSecret", "length"],
      [{ forward: { url, targetSecretSet: true } as never }, "forward.targetSecretSet", "unknown"],
      [{ operatingMode: "forward" as never }, "operatingMode", "format"],
    ];
    for (const [body, field, reason] of cases) {
      const err = await refusal(api.endpoints.create(body));
      expectReply(err, 400, "validation_failed");
      expect(err.details, JSON.stringify(body).slice(0, 200)).toEqual({ field, reason });
    }
    expect((await api.endpoints.list()).items.length).toBe(before);
  });

  it("refuse a destination the egress guard would not send to as target_not_allowed with its reason, and what is no URL as validation_failed", async () => {
    const before = (await api.endpoints.list()).items.length;
    const ftp = await refusal(api.endpoints.create({ operatingMode: "relay", forward: { url: "ftp://127.0.0.1/hooks" } }));
    expectReply(ftp, 400, "target_not_allowed");
    expect(ftp.details).toEqual({ reason: "scheme" });
    for (const url of ["not a url", "http://"]) {
      const bad = await refusal(api.endpoints.create({ operatingMode: "relay", forward: { url } }));
      expectReply(bad, 400, "validation_failed");
      expect(bad.details).toEqual({ field: "forward.url", reason: "format" });
    }
    expect((await api.endpoints.list()).items.length).toBe(before);
    const ep = await api.endpoints.create({});
    expectReply(await refusal(api.endpoints.update(ep.id, { forward: { url: "ftp://127.0.0.1/hooks" } })), 400, "target_not_allowed");
    expect((await api.endpoints.get(ep.id)).forward).toBeUndefined();
  });

  it("are replaced by PATCH, a left-out targetSecret kept, null removing the secret or the settings with it", async () => {
    const ep = await api.endpoints.create({});
    const update = (body: UpdateEndpointRequest) => api.endpoints.update(ep.id, body);

    expectReply(await refusal(update({ operatingMode: "relay" })), 400, "validation_failed");
    expect((await refusal(update({ operatingMode: "proxy" }))).details).toEqual({ field: "forward", reason: "required" });
    expect((await api.endpoints.get(ep.id)).operatingMode).toBe("capture");

    const first = await update({ operatingMode: "relay", forward: { url: `${dest.url}/a`, targetSecret: "s1" } });
    expect(first.forward).toEqual({ url: `${dest.url}/a`, keepPath: true, timeoutMs: 10_000, maxAttempts: 6, targetSecretSet: true });

    const second = await update({ forward: { url: `${dest.url}/b`, maxAttempts: 3 } });
    expect(second.forward).toEqual({ url: `${dest.url}/b`, keepPath: true, timeoutMs: 10_000, maxAttempts: 3, targetSecretSet: true });
    expect(await sealedTargetSecret(ep.id)).toBe("s1");

    expect((await update({ forward: { url: `${dest.url}/b`, targetSecret: "s2" } })).forward?.targetSecretSet).toBe(true);
    expect(await sealedTargetSecret(ep.id)).toBe("s2");
    expect((await update({ forward: { url: `${dest.url}/b`, targetSecret: null } })).forward?.targetSecretSet).toBe(false);
    expect(await sealedTargetSecret(ep.id)).toBeUndefined();

    // A relay endpoint cannot lose its settings, unless it stops forwarding in the same patch.
    await update({ forward: { url: `${dest.url}/b`, targetSecret: "s3" } });
    expect((await refusal(update({ forward: null }))).details).toEqual({ field: "forward", reason: "required" });
    expect((await refusal(update({ operatingMode: "proxy", forward: null }))).details).toEqual({ field: "forward", reason: "required" });
    expect((await update({ operatingMode: "proxy" })).operatingMode).toBe("proxy");
    const cleared = await update({ operatingMode: "capture", forward: null });
    expect(cleared.operatingMode).toBe("capture");
    expect(cleared.forward).toBeUndefined();
    // The secret went with the settings.
    expect(await sealedTargetSecret(ep.id)).toBeUndefined();
    expect((await update({ forward: { url: dest.url } })).forward?.targetSecretSet).toBe(false);
    // Removing settings that a capture endpoint has is allowed without a mode.
    expect((await update({ forward: null })).forward).toBeUndefined();
  });

  it("are validated on PATCH as on create, naming the field", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", forward: { url: dest.url } });
    const cases: [UpdateEndpointRequest, string, string][] = [
      [{ forward: { url: dest.url, timeoutMs: 60_001 } }, "forward.timeoutMs", "range"],
      [{ forward: { url: dest.url, maxAttempts: 21 } }, "forward.maxAttempts", "range"],
      [{ forward: { timeoutMs: 1000 } as never }, "forward.url", "required"],
      [{ forward: "http://x" as never }, "forward", "type"],
    ];
    for (const [body, field, reason] of cases) {
      const err = await refusal(api.endpoints.update(ep.id, body));
      expectReply(err, 400, "validation_failed");
      expect(err.details, JSON.stringify(body)).toEqual({ field, reason });
    }
    expect((await api.endpoints.get(ep.id)).forward?.url).toBe(dest.url);
    expectReply(await refusal(api.endpoints.update(UNKNOWN_ID, { operatingMode: "relay" })), 404, "not_found");
  });
});

describe("an endpoint's forward destination when private targets are not allowed", () => {
  let guarded: TestGateway;
  beforeAll(async () => {
    guarded = await startTestGateway({ allowPrivateTargets: false });
  });
  afterAll(async () => {
    await guarded.close();
  });

  it("is refused on loopback, on create and on PATCH", async () => {
    const api = guarded.a.api;
    for (const url of [`${dest.url}/hooks`, "http://localhost:3000/hooks", "http://[::1]:3000/"]) {
      expectReply(await refusal(api.endpoints.create({ operatingMode: "relay", forward: { url } })), 400, "target_not_allowed");
    }
    const ep = await api.endpoints.create({});
    expectReply(await refusal(api.endpoints.update(ep.id, { operatingMode: "proxy", forward: { url: dest.url } })), 400, "target_not_allowed");
    expect(await api.endpoints.get(ep.id)).toMatchObject({ operatingMode: "capture" });
    expect(dest.received.some((r) => r.url === "/hooks")).toBe(false);
  });
});

/** Attempts recorded through the catalog's RPCs, as replay would record them. */
function createAttemptWriter(endpointId: string, destinationId = endpointId) {
  const sealer = createEnvelopeSealer(t.crypto, { maxAgeMs: 60_000, maxUses: 1000 });
  const ref = (eventId: string) => ({ accountId: owner.accountId, endpointId, eventId, destinationId });
  return {
    begin: async (eventId: string, target: string) => (await t.catalog.beginForwardAttempt({ ...ref(eventId), target })).attempt,
    async record(eventId: string, n: number, a: { status?: number; error?: string; body?: string; sealFor?: string; trigger?: string }) {
      const body = a.body === undefined ? undefined : await sealer.seal(a.sealFor ?? endpointId, Buffer.from(a.body));
      return t.catalog.recordForwardAttempt({
        ...ref(eventId),
        attempt: {
          n,
          trigger: a.trigger ?? "manual",
          atMs: BigInt(Date.UTC(2026, 10, 23, 10, 0, n)),
          url: `${dest.url}/hooks`,
          durationMs: BigInt(10 + n),
          status: a.status ?? 0,
          headers: [
            { name: "Content-Type", value: "text/plain" },
            { name: "Set-Cookie", value: "a=1" },
            { name: "Set-Cookie", value: "b=2" },
          ],
          ...(body ? { body } : {}),
          bodyTruncated: false,
          error: a.error ?? "",
        },
      });
    },
  };
}

describe("an event's forwardedResponse", () => {
  it("is {} before any forward, then every attempt with its answer body opened", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", forward: { url: `${dest.url}/hooks` } });
    const [event] = await t.append(owner, ep.id, [{ body: "{}" }]);
    expect((await api.events.get(ep.id, event!.id)).forwardedResponse).toEqual({});

    const w = createAttemptWriter(ep.id, ep.destinations![0]!.id);
    expect(await w.begin(event!.id, `${dest.url}/hooks`)).toBe(1);
    await w.record(event!.id, 1, { error: "connection_refused" });
    expect(await w.begin(event!.id, `${dest.url}/hooks`)).toBe(2);
    await w.record(event!.id, 2, { status: 500, body: "try later" });
    // A body that cannot be opened (sealed for another endpoint: it fails its tag) reads as "".
    expect(await w.begin(event!.id, `${dest.url}/hooks`)).toBe(3);
    await w.record(event!.id, 3, { status: 200, body: "elsewhere", sealFor: UNKNOWN_ID });

    const detail = await api.events.get(ep.id, event!.id);
    const fr = detail.forwardedResponse as ForwardedResponseJson;
    expect(fr).toMatchObject({ state: "delivered", target: `${dest.url}/hooks`, nextAttemptAt: null });
    expect(fr.attempts.map((a) => [a.n, a.status, a.error])).toEqual([
      [1, null, "connection_refused"],
      [2, 500, null],
      [3, 200, null],
    ]);
    expect(fr.attempts[1]).toEqual({
      n: 2,
      trigger: "manual",
      at: "2026-11-23T10:00:02.000Z",
      url: `${dest.url}/hooks`,
      durationMs: 12,
      status: 500,
      headers: { "Content-Type": ["text/plain"], "Set-Cookie": ["a=1", "b=2"] },
      bodyBase64: Buffer.from("try later").toString("base64"),
      bodyTruncated: false,
      error: null,
      requestSha256: null,
      destinationId: ep.destinations![0]!.id,
    });
    // One destination: one delivery, holding the same attempts (design §17).
    expect(fr.deliveries).toEqual([
      { destinationId: ep.destinations![0]!.id, name: "destination-1", state: "delivered", target: `${dest.url}/hooks`, nextAttemptAt: null, attempts: fr.attempts },
    ]);
    expect(fr.attempts[0]!.bodyBase64).toBe("");
    expect(fr.attempts[2]!.bodyBase64).toBe("");
    expect(detail.decryption).toBe("ok");
    // The list shows the state only.
    const [item] = (await api.events.list(ep.id)).items;
    expect(item!.forwardState).toBe("delivered");
    expect("forwardedResponse" in item!).toBe(false);
  });
});

describe("the forwardState filter", () => {
  it("lists the events in one delivery state, or never forwarded (none)", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", forward: { url: `${dest.url}/hooks` } });
    const [never, delivered, failed, pending] = await t.append(owner, ep.id, [{ body: "1" }, { body: "2" }, { body: "3" }, { body: "4" }]);
    const w = createAttemptWriter(ep.id, ep.destinations![0]!.id);
    await w.record(delivered!.id, await w.begin(delivered!.id, dest.url), { status: 204 });
    await w.record(failed!.id, await w.begin(failed!.id, dest.url), { status: 404 });
    await w.begin(pending!.id, dest.url);

    const ids = async (forwardState: string) =>
      (await api.events.list(ep.id, { forwardState: forwardState as never })).items.map((e) => [e.id, e.forwardState]);
    expect(await ids("none")).toEqual([[never!.id, undefined]]);
    expect(await ids("delivered")).toEqual([[delivered!.id, "delivered"]]);
    expect(await ids("failed")).toEqual([[failed!.id, "failed"]]);
    expect(await ids("pending")).toEqual([[pending!.id, "pending"]]);
    expect(await ids("exhausted")).toEqual([]);
    expect((await api.events.list(ep.id)).items).toHaveLength(4);

    const err = await refusal(api.events.list(ep.id, { forwardState: "lost" as never }));
    expectReply(err, 400, "validation_failed");
    expect(err.details).toEqual({ field: "forwardState", reason: "format" });
  });
});

describe("redeliver", () => {
  it("sends the event to the destination now and answers 200 with the attempt, numbered anew each time", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", forward: { url: `${dest.url}/in` } });
    const bytes = Buffer.from([0x7b, 0x00, 0xff, 0x0d, 0x0a, 0x7d]);
    const [event] = await t.append(owner, ep.id, [
      { method: "PUT", path: "/orders/7?x=1", headers: [["Content-Type", "application/octet-stream"], ["X-Custom", "kept"]], body: bytes },
    ]);
    const rec = validatingFetch();
    const client = t.client(owner.key, { fetch: rec.fetch });
    const before = dest.received.length;

    const first = await client.events.redeliver(ep.id, event!.id);
    expect(rec.last().status).toBe(200);
    expect(first).toMatchObject({ n: 1, trigger: "manual", url: `${dest.url}/in/orders/7?x=1`, status: 200, error: null, bodyTruncated: false });
    expect(Buffer.from(first.bodyBase64, "base64").toString()).toBe(`got ${before + 1}`);
    expect(first.headers["x-dest"] ?? first.headers["X-Dest"]).toEqual(["yes"]);

    const got = dest.received[before]!;
    expect([got.method, got.url]).toEqual(["PUT", "/in/orders/7?x=1"]);
    expect(got.body.equals(bytes)).toBe(true);
    expect(got.headers[ATTEMPT_HEADER.toLowerCase()]).toBe("1");
    expect(got.headers[DELIVERY_ID_HEADER.toLowerCase()]).toBe(event!.id);
    expect(got.headers["x-custom"]).toBe("kept");

    // An empty body is taken as {}.
    const raw = await fetch(`${t.url}/v1/endpoints/${ep.id}/events/${event!.id}/redeliver`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.key}` },
    });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { n: number }).n).toBe(2);
    expect(dest.received[before + 1]!.headers[ATTEMPT_HEADER.toLowerCase()]).toBe("2");

    const fr = (await api.events.get(ep.id, event!.id)).forwardedResponse as ForwardedResponseJson;
    expect(fr.state).toBe("delivered");
    expect(fr.attempts.map((a) => [a.n, a.trigger, a.status])).toEqual([
      [1, "manual", 200],
      [2, "manual", 200],
    ]);
    expect(fr.attempts[0]!.bodyBase64).toBe(first.bodyBase64);
  });

  it("answers 409 forward_not_configured without forward settings, 404 for an unknown event, 400 for a field", async () => {
    const ep = await api.endpoints.create({});
    const [event] = await t.append(owner, ep.id, [{ body: "{}" }]);
    const before = dest.received.length;
    expectReply(await refusal(api.events.redeliver(ep.id, event!.id)), 409, "forward_not_configured");
    expect((await api.events.get(ep.id, event!.id)).forwardedResponse).toEqual({});

    const relay = await api.endpoints.create({ operatingMode: "relay", forward: { url: dest.url } });
    expectReply(await refusal(api.events.redeliver(relay.id, UNKNOWN_ID)), 404, "not_found");
    expectReply(await refusal(t.b.api.events.redeliver(ep.id, event!.id)), 404, "not_found");
    const res = await fetch(`${t.url}/v1/endpoints/${relay.id}/events/${UNKNOWN_ID}/redeliver`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: dest.url }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: unknown }).details).toEqual({ field: "url", reason: "unknown" });
    expect(dest.received.length).toBe(before);
  });
});

describe("recording a client's attempt", () => {
  it("answers 201 with the attempt, then shows it with its body in the event's forwardedResponse", async () => {
    const ep = await api.endpoints.create({});
    const [event] = await t.append(owner, ep.id, [{ body: "{}" }]);
    const rec = validatingFetch();
    const client = t.client(owner.key, { fetch: rec.fetch });
    const answer = Buffer.from([0x6f, 0x6b, 0x00, 0xff]);

    const first = await client.events.recordAttempt(ep.id, event!.id, {
      url: "http://localhost:3000/webhooks",
      status: 500,
      durationMs: 12,
      headers: { "Content-Type": ["application/octet-stream"] },
      bodyBase64: answer.toString("base64"),
    });
    expect(rec.last().status).toBe(201);
    expect(first).toMatchObject({ n: 1, trigger: "cli", url: "http://localhost:3000/webhooks", status: 500, durationMs: 12, error: null });
    expect(first.bodyBase64).toBe(answer.toString("base64"));

    const second = await api.events.recordAttempt(ep.id, event!.id, { url: "http://localhost:3000/webhooks", error: "connection_refused", durationMs: 3 });
    expect(second).toMatchObject({ n: 2, trigger: "cli", status: null, error: "connection_refused", bodyBase64: "" });
    const third = await api.events.recordAttempt(ep.id, event!.id, { url: "http://localhost:3000/webhooks", status: 200, durationMs: 4 });
    expect(third.n).toBe(3);

    const fr = (await api.events.get(ep.id, event!.id)).forwardedResponse as ForwardedResponseJson;
    expect(fr.state).toBe("delivered");
    expect(fr.attempts).toHaveLength(3);
    expect(fr.attempts[0]).toEqual(first);
    expect(first.headers).toEqual({ "Content-Type": ["application/octet-stream"] });
    expect(fr.attempts[0]!.bodyBase64).toBe(answer.toString("base64"));
    expect(fr.attempts[1]).toMatchObject({ n: 2, status: null, error: "connection_refused" });
    // whc listen's attempts are a delivery of their own (design §17).
    expect(fr.deliveries?.map((d) => [d.destinationId, d.name, d.state, d.attempts.length])).toEqual([[LISTEN_DESTINATION_ID, "whc listen", "delivered", 3]]);
  });

  it("refuses an attempt with neither or both of status and error, and answers 404 for an unknown event", async () => {
    const ep = await api.endpoints.create({});
    const [event] = await t.append(owner, ep.id, [{ body: "{}" }]);
    const url = "http://localhost:3000/webhooks";
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url, durationMs: 1 }, "status", "format"],
      [{ url, durationMs: 1, status: 200, error: "timeout" }, "status", "format"],
      [{ url, durationMs: 1, status: 99 }, "status", "range"],
      [{ url, durationMs: 1, error: "gone" }, "error", "format"],
      [{ url, status: 200 }, "durationMs", "required"],
      [{ url, status: 200, durationMs: 1, bodyBase64: "***" }, "bodyBase64", "format"],
      [{ status: 200, durationMs: 1 }, "url", "required"],
    ];
    for (const [body, field, reason] of cases) {
      const err = await refusal(api.events.recordAttempt(ep.id, event!.id, body as never));
      expectReply(err, 400, "validation_failed");
      expect(err.details, JSON.stringify(body)).toEqual({ field, reason });
    }
    expect((await api.events.get(ep.id, event!.id)).forwardedResponse).toEqual({});
    expectReply(await refusal(api.events.recordAttempt(ep.id, UNKNOWN_ID, { url, status: 200, durationMs: 1 })), 404, "not_found");
  });
});

describe("the OpenAPI document", () => {
  it("documents redeliver and attempts as extensions, with their bodies and answers", async () => {
    const doc = (await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, any>;
    const base = "/v1/endpoints/{endpointId}/events/{eventId}";
    const redeliver = doc.paths[`${base}/redeliver`].post;
    const attempts = doc.paths[`${base}/attempts`].post;
    expect(redeliver["x-extension"]).toBe(true);
    expect(attempts["x-extension"]).toBe(true);
    expect(redeliver.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ForwardAttempt" });
    expect(redeliver.responses["409"]).toBeDefined();
    expect(attempts.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ForwardAttempt" });
    expect(attempts.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/RecordAttemptRequest" });
    const listParams = (doc.paths["/v1/endpoints/{endpointId}/events"].get.parameters as { name: string }[]).map((p) => p.name);
    expect(listParams).toContain("forwardState");
    expect(doc.components.schemas.Endpoint.properties.forward).toBeDefined();
  });
});
