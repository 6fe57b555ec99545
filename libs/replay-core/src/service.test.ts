import { afterEach, describe, expect, it } from "vitest";
import { createEgressGuard, type EgressGuardOptions } from "@whc/egress-guard";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  createClient,
  createHandlerContext,
  type Client,
  type Interceptor,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sign as githubSign, verify as githubVerify } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import {
  CatalogService,
  CryptoService,
  ReplayEventRequestSchema,
  ReplayService,
  type Endpoint,
  type RecordReplayAuditRequest,
  type ReplayEventRequest,
} from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createCryptoService, createKeyRing } from "@whc/crypto-core";
import { AppError } from "@whc/errors";
import { createMemoryLeases } from "@whc/messaging";
import { createPeerTransport, createServiceClient, serveH2c } from "@whc/rpc";
import { createEnvelopeOpener, createEnvelopeSealer } from "@whc/sealing";
import { appendCaptures, expectFailure, tempDir } from "@whc/testing";
import { createReplayService, type ReplayServiceOptions } from "./service.js";
import { logger, onCleanup, refusingPort, runCleanups, serve, startTarget, valuesOf } from "./testing/index.js";

/*
 * The replay service served by Connect's router transport and called through a typed client,
 * as the gateway calls it. Its collaborators run for real: the catalog service over the
 * embedded SQLite store, the crypto service sealing and opening bodies, in-memory egress
 * leases, and local HTTP targets on 127.0.0.1 that record what reaches them.
 */

afterEach(runCleanups);

/** What the account's allowance is counted against today (UTC). */
const today = () => new Date().toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// The service and its collaborators

interface HarnessOptions extends Partial<ReplayServiceOptions> {
  slotsPerOrigin?: number;
  /** The egress guard's (default true: the targets are on loopback). */
  allowPrivateTargets?: boolean;
  resolver?: EgressGuardOptions["resolver"];
  connect?: EgressGuardOptions["connect"];
  now?: () => number;
  /** The crypto peer replay opens bodies with; by default the one that sealed them. */
  openerCrypto?: Client<typeof CryptoService>;
}

interface CaptureInput {
  endpoint?: Partial<Omit<Endpoint, "$typeName">>;
  method?: string;
  headers?: [string, string][];
  body?: Uint8Array;
  /** Only metadata stored, as in `metadata_only` mode. */
  metadataOnly?: boolean;
  truncated?: boolean;
}

async function startReplay(options: HarnessOptions = {}) {
  const { slotsPerOrigin = 1, resolver, connect, allowPrivateTargets = true, now, openerCrypto, ...overrides } = options;
  const dir = tempDir("whc-replay-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  onCleanup(async () => {
    await store.close();
    dir.remove();
  });

  // Every call replay makes to the catalog, as the catalog received it.
  const catalogCalls: { method: string; message: unknown }[] = [];
  const recorder: Interceptor = (next) => async (req) => {
    if (!req.stream) catalogCalls.push({ method: req.method.name, message: req.message });
    return next(req);
  };
  const catalog = createServiceClient(CatalogService, serve((r) => r.service(CatalogService, createCatalogService(store)), [recorder]));
  const ring = createKeyRing([{ id: "k1", key: randomBytes(32) }], randomBytes(32));
  const crypto = createServiceClient(CryptoService, serve((r) => r.service(CryptoService, createCryptoService(ring))));
  const sealer = createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1000 });
  const leases = createMemoryLeases({ slotsPerOrigin, ttlMs: 30_000 });
  const settings: ReplayServiceOptions = {
    dailyLimit: 100,
    connectTimeoutMs: 2000,
    totalTimeoutMs: 5000,
    maxExcerptBytes: 4096,
    ...overrides,
  };
  const service = createReplayService(
    {
      catalog,
      opener: createEnvelopeOpener(openerCrypto ?? crypto, { maxAgeMs: 60_000, maxEntries: 100 }),
      crypto,
      sealer,
      leases,
      logger,
      egress: createEgressGuard({ allowPrivate: allowPrivateTargets, resolver, connect }),
      ...(now ? { now } : {}),
    },
    settings,
  );
  const replay = createClient(ReplayService, serve((r) => r.service(ReplayService, service)));

  const account = async (name = `acct-${randomUUID()}`) => {
    const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: randomBytes(32), prefix: "whc_test" });
    return { accountId: key!.accountId, keyId: key!.id };
  };
  const owner = await account();

  /** Stores an event the way ingest does: body sealed for its endpoint, then appended. */
  async function capture(input: CaptureInput = {}, accountId = owner.accountId) {
    const { endpoint } = await catalog.createEndpoint({
      endpoint: {
        accountId,
        slug: `ep-${randomUUID().slice(0, 8)}`,
        displayName: "replay test",
        operatingMode: input.metadataOnly ? "metadata_only" : "capture",
        status: "active",
        replayFromDashboard: true,
        replayFromApi: true,
        provider: "generic",
        source: "api",
        ...input.endpoint,
      },
    });
    const body = input.body ?? Buffer.from('{"hello":"world"}');
    const events = await appendCaptures(catalog, sealer, [
      {
        accountId,
        endpointId: endpoint!.id,
        method: input.method ?? "POST",
        path: "/",
        headers: input.headers ?? [["Content-Type", "application/json"]],
        provider: endpoint!.provider,
        truncated: input.truncated ?? false,
        originalSizeBytes: body.length,
        body: input.metadataOnly ? undefined : body,
      },
    ]);
    return { accountId, endpointId: endpoint!.id, eventId: events[0]!.id };
  }

  /** A request for operation 9 on a captured event. */
  const request = (
    source: { accountId: string; endpointId: string; eventId: string },
    targetUrl: string,
    extra: Partial<Omit<ReplayEventRequest, "$typeName">> = {},
  ) => ({ ...source, targetUrl, keyId: owner.keyId, ...extra });

  const usage = async (accountId = owner.accountId, day = today()) => (await catalog.getReplayUsage({ accountId, day })).used;
  const callsTo = (method: string) => catalogCalls.filter((c) => c.method === method);
  /** True when a lease for the origin can be taken now (and gives it back). */
  const leaseFree = async (origin: string) => {
    const lease = await leases.acquire(origin);
    await lease?.release();
    return lease !== undefined;
  };

  return { replay, service, catalog, crypto, store, leases, owner, account, capture, request, usage, callsTo, leaseFree };
}

// ---------------------------------------------------------------------------------------------
// Errors as a caller sees them


// ---------------------------------------------------------------------------------------------

describe("exact replay", () => {
  it("sends the stored method, headers minus hop-by-hop ones, and the exact body bytes, and reports delivered", async () => {
    const h = await startReplay();
    const body = Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28]), Buffer.from('{"x":"é"}'), Buffer.from([13, 10, 0])]);
    const source = await h.capture({
      method: "PATCH",
      body,
      headers: [
        ["Content-Type", "application/octet-stream"],
        ["X-Custom", "keep me"],
        ["X-Repeat", "one"],
        ["Authorization", "Bearer end-to-end"],
        ["X-Repeat", "two"],
        // Bytes that are not ASCII, stored one character per byte as ingest stores them.
        ["X-Note", "caf\u00c3\u00a9"],
        ["Host", "original.example"],
        ["Content-Length", "999"],
        ["Connection", "upgrade"],
        ["Keep-Alive", "timeout=5"],
        ["Transfer-Encoding", "chunked"],
        ["TE", "trailers"],
        ["Trailer", "X-Checksum"],
        ["Upgrade", "websocket"],
        ["Proxy-Connection", "keep-alive"],
        ["Proxy-Authorization", "Basic eDp5"],
        ["Expect", "100-continue"],
        ["X-Forwarded-For", "203.0.113.1"],
        ["X-Forwarded-Host", "proxy.example"],
        ["X-Forwarded-Proto", "https"],
        ["X-Real-IP", "203.0.113.1"],
        ["Forwarded", "for=203.0.113.1"],
      ],
    });
    const target = await startTarget((_req, res) => {
      setTimeout(() => {
        res.statusCode = 201;
        res.end("accepted ✓");
      }, 30);
    });

    const res = await h.replay.replayEvent(h.request(source, `${target.url}/in/path?z=1&y=%20`));

    expect(res).toMatchObject({
      result: "delivered",
      targetStatus: 201,
      networkFailureReason: "",
      mode: "exact",
      eventId: source.eventId,
      targetUrl: `${target.url}/in/path?z=1&y=%20`,
      sourceBodyTruncated: false,
      excerptTruncated: false,
      rateLimitLimit: 100,
      rateLimitRemaining: 99,
    });
    expect(Buffer.from(res.responseExcerpt).toString("utf8")).toBe("accepted ✓");
    expect(res.durationMs).toBeGreaterThanOrEqual(25n);
    expect(res.durationMs).toBeLessThan(5000n);
    expect(res.auditId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.rateLimitReset).toBeGreaterThan(0);
    expect(res.rateLimitReset).toBeLessThanOrEqual(86_400);

    expect(target.received).toHaveLength(1);
    const got = target.received[0]!;
    expect(got.method).toBe("PATCH");
    expect(got.url).toBe("/in/path?z=1&y=%20");
    expect(got.body.equals(body)).toBe(true);
    // What the request computes for itself: its own Host, Content-Length and connection handling.
    expect(valuesOf(got.headers, "host")).toEqual([`127.0.0.1:${target.port}`]);
    expect(valuesOf(got.headers, "content-length")).toEqual([String(body.length)]);
    // The connection's own (kept for the next request to this address, ADR 0096), never the capture's.
    expect(valuesOf(got.headers, "connection")).toEqual(["keep-alive"]);
    expect(valuesOf(got.headers, "keep-alive")).toEqual([]);
    // Everything else is exactly the end-to-end headers, values of a repeated name in order,
    // and the hop count a forward carries (a first one: 1).
    const endToEnd = got.headers
      .filter(([name]) => !["host", "content-length", "connection"].includes(name.toLowerCase()))
      .sort(([a], [b]) => a.toLowerCase().localeCompare(b.toLowerCase()));
    expect(endToEnd).toEqual([
      ["Authorization", "Bearer end-to-end"],
      ["Content-Type", "application/octet-stream"],
      ["X-Custom", "keep me"],
      ["X-Note", "caf\u00c3\u00a9"],
      ["X-Repeat", "one"],
      ["X-Repeat", "two"],
      ["X-Whc-Hop", "1"],
    ]);
  });

  it("records the outcome in the catalog's audit, with the caller's request id and key", async () => {
    const h = await startReplay();
    const source = await h.capture();
    const target = await startTarget((_req, res) => {
      res.statusCode = 202;
      res.end();
    });

    const res = await h.replay.replayEvent(h.request(source, `${target.url}/a`, { client: "dashboard" }), {
      headers: { "x-request-id": "req-replay-1" },
    });

    const audits = h.callsTo("RecordReplayAudit").map((c) => (c.message as RecordReplayAuditRequest).audit);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      accountId: source.accountId,
      endpointId: source.endpointId,
      eventId: source.eventId,
      keyId: h.owner.keyId,
      targetUrl: `${target.url}/a`,
      mode: "exact",
      result: "delivered",
      targetStatus: 202,
      networkFailureReason: "",
      requestId: "req-replay-1",
      client: "dashboard",
    });
    expect(res.auditId).not.toBe("");
    expect(await h.usage()).toBe(1);
  });

  it("sends a stored-metadata-only event without a body and says the source body is missing", async () => {
    const h = await startReplay();
    const source = await h.capture({ metadataOnly: true, body: Buffer.from("never stored") });
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "delivered", sourceBodyTruncated: true });
    expect(target.received[0]!.body.length).toBe(0);
    expect(valuesOf(target.received[0]!.headers, "content-length")).toEqual(["0"]);
  });

  it("says so when the stored body was truncated at capture", async () => {
    const h = await startReplay();
    const source = await h.capture({ truncated: true, body: Buffer.from("first part") });
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "delivered", sourceBodyTruncated: true });
    expect(target.received[0]!.body.toString()).toBe("first part");
  });

  it("keeps at most maxExcerptBytes of the answer and flags the rest as cut", async () => {
    const h = await startReplay({ maxExcerptBytes: 4096 });
    const source = await h.capture();
    const answer = Buffer.alloc(10_000, "a");
    answer.write("START", 0);
    const target = await startTarget((_req, res) => res.end(answer));

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res.result).toBe("delivered");
    expect(res.excerptTruncated).toBe(true);
    expect(Buffer.from(res.responseExcerpt).equals(answer.subarray(0, 4096))).toBe(true);
  });
});

describe("outcomes other than delivered", () => {
  it.each([400, 404, 500, 503])("reports a %i answer as rejected, with status and excerpt", async (status) => {
    const h = await startReplay();
    const source = await h.capture();
    const target = await startTarget((_req, res) => {
      res.statusCode = status;
      res.end(`status ${status}`);
    });

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "rejected", targetStatus: status, networkFailureReason: "" });
    expect(Buffer.from(res.responseExcerpt).toString()).toBe(`status ${status}`);
    expect(target.received).toHaveLength(1);
  });

  it("does not follow a redirect: the 3xx is the answer", async () => {
    const h = await startReplay();
    const source = await h.capture();
    const elsewhere = await startTarget();
    const target = await startTarget((_req, res) => {
      res.writeHead(302, { Location: `${elsewhere.url}/moved` });
      res.end();
    });

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "rejected", targetStatus: 302 });
    expect(elsewhere.connections()).toBe(0);
  });

  it("reports a refused connection as network_error connection_refused, audits it and frees the lease", async () => {
    const h = await startReplay({ slotsPerOrigin: 1 });
    const source = await h.capture();
    const port = await refusingPort();

    for (let attempt = 0; attempt < 2; attempt += 1) {
      const res = await h.replay.replayEvent(h.request(source, `http://127.0.0.1:${port}/`));
      expect(res).toMatchObject({ result: "network_error", networkFailureReason: "connection_refused", targetStatus: 0 });
      expect(res.responseExcerpt.length).toBe(0);
    }
    const audits = h.callsTo("RecordReplayAudit").map((c) => (c.message as RecordReplayAuditRequest).audit);
    expect(audits.map((a) => [a?.result, a?.networkFailureReason])).toEqual([
      ["network_error", "connection_refused"],
      ["network_error", "connection_refused"],
    ]);
    expect(await h.leaseFree(`http://127.0.0.1:${port}`)).toBe(true);
  });

  it("reports a target that does not answer in time as network_error timeout", async () => {
    const h = await startReplay({ totalTimeoutMs: 300 });
    const source = await h.capture();
    const target = await startTarget(() => undefined);

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "network_error", networkFailureReason: "timeout", targetStatus: 0 });
    expect(res.durationMs).toBeGreaterThanOrEqual(250n);
    expect(res.durationMs).toBeLessThan(3000n);
  });

  it("still answers with the outcome when the audit cannot be recorded", async () => {
    const h = await startReplay();
    const source = await h.capture();
    h.store.recordReplayAudit = async () => {
      throw new Error("disk full");
    };
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "delivered", targetStatus: 200, auditId: "" });
    expect(target.received).toHaveLength(1);
  });
});

describe("resign", () => {
  it("recomputes the Stripe signature with target_secret so that Stripe's library verifies it", async () => {
    const h = await startReplay();
    const stripe = new Stripe("sk_test_replay");
    const payload = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid" });
    const source = await h.capture({
      endpoint: { provider: "stripe" },
      body: Buffer.from(payload),
      headers: [
        ["Content-Type", "application/json"],
        ["Stripe-Signature", stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" })],
      ],
    });
    const target = await startTarget();

    // No mode given: a target_secret means resign.
    const res = await h.replay.replayEvent(h.request(source, target.url, { targetSecret: "whsec_target" }));

    expect(res).toMatchObject({ result: "delivered", mode: "resign" });
    const got = target.received[0]!;
    expect(got.body.toString()).toBe(payload);
    expect(valuesOf(got.headers, "content-type")).toEqual(["application/json"]);
    const signatures = valuesOf(got.headers, "stripe-signature");
    expect(signatures).toHaveLength(1);
    expect(stripe.webhooks.constructEvent(got.body, signatures[0]!, "whsec_target").type).toBe("invoice.paid");
    expect(() => stripe.webhooks.constructEvent(got.body, signatures[0]!, "whsec_source")).toThrow();
  });

  it("keeps the original Stripe signature when mode is exact, even with a target_secret", async () => {
    const h = await startReplay();
    const stripe = new Stripe("sk_test_replay");
    const payload = JSON.stringify({ id: "evt_2", object: "event", type: "charge.refunded" });
    const original = stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" });
    const source = await h.capture({ endpoint: { provider: "stripe" }, body: Buffer.from(payload), headers: [["Stripe-Signature", original]] });
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url, { mode: "exact", targetSecret: "whsec_target" }));

    expect(res.mode).toBe("exact");
    const got = target.received[0]!;
    expect(valuesOf(got.headers, "stripe-signature")).toEqual([original]);
    expect(stripe.webhooks.constructEvent(got.body, original, "whsec_source").type).toBe("charge.refunded");
  });

  it("recomputes GitHub's signatures so that @octokit/webhooks-methods verifies them", async () => {
    const h = await startReplay();
    const payload = JSON.stringify({ action: "opened", number: 7, pull_request: { title: "naïve ✓" } });
    const source = await h.capture({
      endpoint: { provider: "github" },
      body: Buffer.from(payload, "utf8"),
      headers: [
        ["X-GitHub-Event", "pull_request"],
        ["X-Hub-Signature-256", await githubSign("gh-source", payload)],
        ["X-Hub-Signature", `sha1=${createHmac("sha1", "gh-source").update(payload).digest("hex")}`],
      ],
    });
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url, { mode: "resign", targetSecret: "gh-target" }));

    expect(res).toMatchObject({ result: "delivered", mode: "resign" });
    const got = target.received[0]!;
    const body = got.body.toString("utf8");
    expect(body).toBe(payload);
    const sha256 = valuesOf(got.headers, "x-hub-signature-256");
    expect(sha256).toHaveLength(1);
    expect(await githubVerify("gh-target", body, sha256[0]!)).toBe(true);
    expect(await githubVerify("gh-source", body, sha256[0]!)).toBe(false);
    expect(valuesOf(got.headers, "x-hub-signature")).toEqual([`sha1=${createHmac("sha1", "gh-target").update(got.body).digest("hex")}`]);
    expect(valuesOf(got.headers, "x-github-event")).toEqual(["pull_request"]);
  });

  it("recomputes a Standard Webhooks signature, keeping the message id, so that the standardwebhooks library verifies it", async () => {
    const h = await startReplay();
    const sourceSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const targetSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const payload = JSON.stringify({ type: "invoice.paid", data: { id: "in_1" } });
    const sentAt = new Date();
    const source = await h.capture({
      endpoint: { provider: "standard_webhooks" },
      body: Buffer.from(payload),
      headers: [
        ["webhook-id", "msg_replay_1"],
        ["webhook-timestamp", String(Math.floor(sentAt.getTime() / 1000))],
        ["webhook-signature", new Webhook(sourceSecret).sign("msg_replay_1", sentAt, payload)],
      ],
    });
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, target.url, { targetSecret }));

    expect(res.mode).toBe("resign");
    const got = target.received[0]!;
    const headers = Object.fromEntries(
      ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => {
        const values = valuesOf(got.headers, name);
        expect(values, name).toHaveLength(1);
        return [name, values[0]!];
      }),
    );
    expect(headers["webhook-id"]).toBe("msg_replay_1");
    expect(new Webhook(targetSecret).verify(got.body.toString(), headers)).toEqual(JSON.parse(payload));
    expect(() => new Webhook(sourceSecret).verify(got.body.toString(), headers)).toThrow();
  });
});

describe("refusals", () => {
  it("refuses with replay_disabled when the endpoint's replayFromApi is false, and charges nothing", async () => {
    const h = await startReplay();
    const source = await h.capture({ endpoint: { replayFromApi: false } });
    const target = await startTarget();

    await expectFailure(h.replay.replayEvent(h.request(source, target.url)), Code.PermissionDenied, "replay_disabled");

    expect(target.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
    expect(h.callsTo("ChargeReplay")).toEqual([]);
    expect(h.callsTo("RecordReplayAudit")).toEqual([]);
    expect(await h.leaseFree(target.url)).toBe(true);
  });

  it("applies replayFromDashboard, not replayFromApi, to the dashboard", async () => {
    const h = await startReplay();
    const apiOnly = await h.capture({ endpoint: { replayFromApi: false, replayFromDashboard: true } });
    const dashboardOff = await h.capture({ endpoint: { replayFromApi: true, replayFromDashboard: false } });
    const target = await startTarget();

    expect((await h.replay.replayEvent(h.request(apiOnly, target.url, { client: "dashboard" }))).result).toBe("delivered");
    await expectFailure(h.replay.replayEvent(h.request(dashboardOff, target.url, { client: "dashboard" })), Code.PermissionDenied, "replay_disabled");
    expect((await h.replay.replayEvent(h.request(dashboardOff, target.url))).result).toBe("delivered");
    expect(target.received).toHaveLength(2);
  });

  it("answers egress_capacity_exhausted when no lease is free: nothing sent, nothing recorded, allowance untouched", async () => {
    const h = await startReplay({ slotsPerOrigin: 1 });
    const source = await h.capture();
    const target = await startTarget();
    const held = await h.leases.acquire(target.url);
    expect(held).toBeDefined();

    await expectFailure(h.replay.replayEvent(h.request(source, target.url)), Code.ResourceExhausted, "egress_capacity_exhausted");

    expect(target.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
    expect(h.callsTo("ChargeReplay")).toEqual([]);
    expect(h.callsTo("RecordReplayAudit")).toEqual([]);

    // Another origin is not held up, and once the lease is back the same replay goes out.
    const other = await startTarget();
    expect((await h.replay.replayEvent(h.request(source, other.url))).result).toBe("delivered");
    await held!.release();
    expect((await h.replay.replayEvent(h.request(source, target.url))).result).toBe("delivered");
    expect(target.received).toHaveLength(1);
  });

  it("holds the lease while a replay is in flight, so a concurrent one to the same origin is refused", async () => {
    const h = await startReplay({ slotsPerOrigin: 1 });
    const source = await h.capture();
    let reached: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    let answer: () => void = () => undefined;
    const slow = await startTarget((_req, res) => {
      answer = () => res.end("late");
      reached();
    });

    const first = h.replay.replayEvent(h.request(source, slow.url));
    await arrived;
    await expectFailure(h.replay.replayEvent(h.request(source, slow.url)), Code.ResourceExhausted, "egress_capacity_exhausted");
    answer();

    expect(await first).toMatchObject({ result: "delivered", rateLimitRemaining: 99 });
    expect(slow.received).toHaveLength(1);
    expect(await h.usage()).toBe(1);
  });

  it("answers replay_limit_exceeded once the daily allowance is spent, with the limit and reset, and frees the lease", async () => {
    const h = await startReplay({ dailyLimit: 2, slotsPerOrigin: 1 });
    const source = await h.capture();
    const target = await startTarget();

    expect((await h.replay.replayEvent(h.request(source, target.url))).rateLimitRemaining).toBe(1);
    expect((await h.replay.replayEvent(h.request(source, target.url))).rateLimitRemaining).toBe(0);
    const err = await expectFailure(h.replay.replayEvent(h.request(source, target.url)), Code.ResourceExhausted, "replay_limit_exceeded");

    expect(err.metadata.get("whc-meta-limit")).toBe("2");
    const reset = Number(err.metadata.get("whc-meta-reset"));
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(86_400);
    expect(target.received).toHaveLength(2);
    expect(h.callsTo("RecordReplayAudit")).toHaveLength(2);
    expect(await h.usage()).toBe(2);
    expect(await h.leaseFree(target.url)).toBe(true);

    // Each account has its own allowance.
    const other = await h.account();
    const theirs = await h.capture({}, other.accountId);
    expect((await h.replay.replayEvent(h.request(theirs, target.url))).result).toBe("delivered");
  });

  it("counts the allowance per UTC day and gives the seconds to the next UTC midnight", async () => {
    let clock = Date.UTC(2026, 10, 23, 23, 59, 30);
    const h = await startReplay({ dailyLimit: 1, now: () => clock });
    const source = await h.capture();
    const target = await startTarget();

    const first = await h.replay.replayEvent(h.request(source, target.url));
    expect(first).toMatchObject({ result: "delivered", rateLimitLimit: 1, rateLimitRemaining: 0, rateLimitReset: 30 });
    const spent = await expectFailure(h.replay.replayEvent(h.request(source, target.url)), Code.ResourceExhausted, "replay_limit_exceeded");
    expect(spent.metadata.get("whc-meta-reset")).toBe("30");
    expect(await h.usage(h.owner.accountId, "2026-11-23")).toBe(1);

    clock = Date.UTC(2026, 10, 24, 0, 0, 1);
    expect(await h.replay.replayEvent(h.request(source, target.url))).toMatchObject({ result: "delivered", rateLimitReset: 86_399 });
    expect(await h.usage(h.owner.accountId, "2026-11-24")).toBe(1);
    expect(target.received).toHaveLength(2);
  });

  it("checks in design §3's order: replay flag, target, egress lease, allowance", async () => {
    const h = await startReplay({ dailyLimit: 1, slotsPerOrigin: 1 });
    const enabled = await h.capture();
    const disabled = await h.capture({ endpoint: { replayFromApi: false } });
    const target = await startTarget();
    // Refused even though private targets are allowed: not http(s). (A refused address that
    // nothing could reach, should the guard break; the metadata range is the classifier's test.)
    const refused = `ftp://127.0.0.1:${target.port}/`;
    expect((await h.replay.replayEvent(h.request(enabled, target.url))).result).toBe("delivered");
    // Now every check would fail: the allowance is spent and both origins' leases are held.
    const heldTarget = await h.leases.acquire(target.url);
    const heldRefused = await h.leases.acquire(new URL(refused).origin);
    expect(heldTarget && heldRefused).toBeDefined();

    await expectFailure(h.replay.replayEvent(h.request(disabled, refused)), Code.PermissionDenied, "replay_disabled");
    await expectFailure(h.replay.replayEvent(h.request(enabled, refused)), Code.InvalidArgument, "target_not_allowed");
    await expectFailure(h.replay.replayEvent(h.request(enabled, target.url)), Code.ResourceExhausted, "egress_capacity_exhausted");
    await heldTarget!.release();
    await expectFailure(h.replay.replayEvent(h.request(enabled, target.url)), Code.ResourceExhausted, "replay_limit_exceeded");

    expect(target.received).toHaveLength(1);
    expect(await h.usage()).toBe(1);
    expect(await h.leaseFree(target.url)).toBe(true);
    await heldRefused!.release();
  });

  it("charges nothing when the crypto service cannot open the body", async () => {
    const unreachable = createServiceClient(CryptoService, createPeerTransport(`http://127.0.0.1:${await refusingPort()}`, 2000, undefined));
    const h = await startReplay({ openerCrypto: unreachable, slotsPerOrigin: 1 });
    const source = await h.capture();
    const target = await startTarget();

    await expectFailure(h.replay.replayEvent(h.request(source, target.url)), Code.Unavailable, "service_unavailable");

    expect(target.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
    expect(h.callsTo("ChargeReplay")).toEqual([]);
    expect(await h.leaseFree(target.url)).toBe(true);
  });

  it("answers not_found for another account's event, the same as for an unknown one, and sends nothing", async () => {
    const h = await startReplay();
    const other = await h.account();
    const theirs = await h.capture({}, other.accountId);
    const target = await startTarget();

    const foreign = await expectFailure(
      h.replay.replayEvent(h.request({ ...theirs, accountId: h.owner.accountId }, target.url)),
      Code.NotFound,
      "not_found",
    );
    const mine = await h.capture();
    const unknown = await expectFailure(
      h.replay.replayEvent(h.request({ ...mine, eventId: "01890000-0000-7000-8000-000000000000" }, target.url)),
      Code.NotFound,
      "not_found",
    );
    const unknownEndpoint = await expectFailure(
      h.replay.replayEvent(h.request({ ...mine, endpointId: "01890000-0000-7000-8000-000000000000" }, target.url)),
      Code.NotFound,
      "not_found",
    );
    expect(foreign.rawMessage).toBe(unknownEndpoint.rawMessage);
    expect(unknown.code).toBe(Code.NotFound);
    expect(target.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
  });

  it("validates the request before anything else", async () => {
    const h = await startReplay();
    const source = await h.capture();
    const target = await startTarget();

    await expectFailure(h.replay.replayEvent(h.request({ ...source, accountId: "" }, target.url)), Code.InvalidArgument, "validation_failed", {
      field: "account_id",
      fieldReason: "required",
    });
    await expectFailure(h.replay.replayEvent(h.request(source, target.url, { mode: "loud" })), Code.InvalidArgument, "validation_failed", {
      field: "mode",
      fieldReason: "format",
    });
    await expectFailure(h.replay.replayEvent(h.request(source, target.url, { mode: "resign" })), Code.InvalidArgument, "validation_failed", {
      field: "target_secret",
      fieldReason: "required",
    });
    expect(target.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
  });
});

describe("the target guard", () => {
  it("refuses private, loopback and metadata targets when private targets are not allowed, before any connection", async () => {
    const h = await startReplay({ allowPrivateTargets: false });
    const source = await h.capture();
    const trap = await startTarget();
    const cases: [url: string, category: string][] = [
      // Only loopback spellings of a trap that counts connections: were the guard broken, nothing
      // would leave the machine. Private, link-local and metadata ranges are the classifier's
      // tests (libs/egress-guard), which never send.
      // The trap on 127.0.0.1 in several spellings; `localhost` through the system resolver.
      [`${trap.url}/`, "loopback"],
      [`http://2130706433:${trap.port}/`, "loopback"],
      [`http://0x7f000001:${trap.port}/`, "loopback"],
      [`http://127.1:${trap.port}/`, "loopback"],
      [`http://localhost:${trap.port}/`, "loopback"],
    ];

    for (const [url, category] of cases) {
      const err = await expectFailure(h.replay.replayEvent(h.request(source, url)), Code.InvalidArgument, "target_not_allowed");
      expect({ url, refusal: err.metadata.get("whc-meta-refusal"), category: err.metadata.get("whc-meta-category") }).toEqual({
        url,
        refusal: "address_not_allowed",
        category,
      });
      expect(await h.leaseFree(new URL(url).origin)).toBe(true);
    }
    expect(trap.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
    expect(h.callsTo("ChargeReplay")).toEqual([]);
    expect(h.callsTo("RecordReplayAudit")).toEqual([]);
  });

  it("refuses other schemes, credentials in the URL and what is not a URL", async () => {
    const h = await startReplay();
    const source = await h.capture();
    for (const [url, refusal, reason] of [
      ["ftp://example.com/hook", "scheme_not_allowed", "scheme"],
      ["file:///etc/passwd", "scheme_not_allowed", "scheme"],
      ["http://user:secret@example.com/", "credentials_in_url", "credentials"],
    ] as const) {
      const err = await expectFailure(h.replay.replayEvent(h.request(source, url)), Code.InvalidArgument, "target_not_allowed");
      expect({ url, refusal: err.metadata.get("whc-meta-refusal"), reason: err.metadata.get("whc-meta-reason") }).toEqual({ url, refusal, reason });
    }
    // Not a URL at all: the field is malformed, not a target refused.
    await expectFailure(h.replay.replayEvent(h.request(source, "not a url")), Code.InvalidArgument, "validation_failed");
    expect(await h.usage()).toBe(0);
  });

  it("vets the addresses a name resolves to; a name that does not resolve is a dns_failure outcome", async () => {
    // A name answered with loopback only, aimed at a trap: a broken guard would reach the trap,
    // never another host. Names with several answers are the classifier's tests (libs/egress-guard).
    const names: Record<string, { address: string; family: 4 | 6 }[]> = {
      "mixed.example.test": [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ],
    };
    const trap = await startTarget();
    const h = await startReplay({
      allowPrivateTargets: false,
      resolver: async (name) => {
        const answers = names[name];
        if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
        return answers;
      },
    });
    const source = await h.capture();

    const mixed = await expectFailure(h.replay.replayEvent(h.request(source, `http://mixed.example.test:${trap.port}/`)), Code.InvalidArgument, "target_not_allowed");
    expect(mixed.metadata.get("whc-meta-category")).toBe("loopback");
    expect(mixed.metadata.get("whc-meta-reason")).toBe("loopback");
    expect(trap.connections()).toBe(0);
    expect(await h.usage()).toBe(0);
    // A name that does not resolve is not a forbidden target (design §14): an outcome, charged and audited like any network error.
    const missing = await h.replay.replayEvent(h.request(source, "http://nowhere.example.test/"));
    expect(missing).toMatchObject({ result: "network_error", networkFailureReason: "dns_failure", targetStatus: 0 });
    expect(missing.auditId).not.toBe("");
    expect(await h.usage()).toBe(1);
  });

  it("connects to the address it vetted and names the host in the request", async () => {
    let lookups = 0;
    const h = await startReplay({
      allowPrivateTargets: true,
      resolver: async () => {
        lookups += 1;
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    const source = await h.capture();
    const target = await startTarget();

    const res = await h.replay.replayEvent(h.request(source, `http://hooks.example.test:${target.port}/in`));

    expect(res.result).toBe("delivered");
    expect(lookups).toBe(1);
    expect(target.received[0]!.url).toBe("/in");
    expect(valuesOf(target.received[0]!.headers, "host")).toEqual([`hooks.example.test:${target.port}`]);
  });
});

describe("served on a real HTTP/2 server on port 0", () => {
  async function overTheWire(options: HarnessOptions = {}) {
    const h = await startReplay(options);
    const server = await serveH2c({ routes: (r) => r.service(ReplayService, h.service), port: 0, host: "127.0.0.1", logger, credentials: undefined });
    onCleanup(() => server.close());
    return { h, replay: createClient(ReplayService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` })) };
  }

  it("delivers an exact replay through gRPC", async () => {
    const { h, replay } = await overTheWire();
    const body = Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]);
    const source = await h.capture({ body, method: "PUT" });
    const target = await startTarget();

    const res = await replay.replayEvent(h.request(source, target.url));

    expect(res).toMatchObject({ result: "delivered", targetStatus: 200, mode: "exact" });
    expect(Buffer.from(res.responseExcerpt).toString()).toBe("thanks");
    expect(target.received[0]!.method).toBe("PUT");
    expect(target.received[0]!.body.equals(body)).toBe(true);
  });

  it("carries the reason and the rate-limit figures of a refusal across the wire", async () => {
    const { h, replay } = await overTheWire({ dailyLimit: 1 });
    const source = await h.capture();
    const target = await startTarget();
    await replay.replayEvent(h.request(source, target.url));

    const err = await expectFailure(replay.replayEvent(h.request(source, target.url)), Code.ResourceExhausted, "replay_limit_exceeded");
    expect(err.metadata.get("whc-meta-limit")).toBe("1");
    expect(Number(err.metadata.get("whc-meta-reset"))).toBeGreaterThan(0);
    const disabled = await h.capture({ endpoint: { replayFromApi: false } });
    await expectFailure(replay.replayEvent(h.request(disabled, target.url)), Code.PermissionDenied, "replay_disabled");
  });
});

describe("called directly", () => {
  const context = () =>
    createHandlerContext({
      service: ReplayService,
      method: ReplayService.method.replayEvent,
      protocolName: "direct",
      requestMethod: "POST",
      url: "direct://replay",
    });

  it("answers the outcome", async () => {
    const h = await startReplay();
    const source = await h.capture({ body: Buffer.from("direct") });
    const target = await startTarget();

    const res = await h.service.replayEvent(create(ReplayEventRequestSchema, h.request(source, target.url)), context());

    expect(res).toMatchObject({ result: "delivered", targetStatus: 200, rateLimitRemaining: 99 });
    expect(target.received[0]!.body.toString()).toBe("direct");
  });

  it("throws the domain error with what the edges need", async () => {
    const h = await startReplay({ allowPrivateTargets: false });
    const source = await h.capture();
    const trap = await startTarget();

    const err = await Promise.resolve(h.service.replayEvent(create(ReplayEventRequestSchema, h.request(source, `${trap.url}/`)), context())).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(AppError.is(err)).toBe(true);
    expect(err).toMatchObject({ reason: "target_not_allowed", meta: { refusal: "address_not_allowed", category: "loopback" } });
    expect(trap.connections()).toBe(0);
  });
});
