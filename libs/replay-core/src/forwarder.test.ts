import { afterEach, describe, expect, it, vi } from "vitest";
import { createHash } from "node:crypto";
import { openCapture } from "@whc/sealing";
import { appendCaptures } from "@whc/testing";
import type { Interceptor } from "@connectrpc/connect";
import Stripe from "stripe";
import type { Endpoint, Event } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { createForwarder, type ForwarderOptions } from "./forwarder.js";
import { onCleanup, refusingPort, runCleanups, startBackends, startTarget, valuesOf, type Backends } from "./testing/index.js";

/*
 * The relay outbox worker against the real catalog on SQLite and real local destinations.
 * Retry delays are configured down to milliseconds; the tests wait for states, never for time.
 */

afterEach(runCleanups);

interface RelayInput {
  method?: string;
  /** The capture's sub-path and query (what followed the webhook URL). */
  path?: string;
  headers?: [string, string][];
  body?: Uint8Array;
  provider?: string;
}

/** Appends a capture the way ingest does for a relay endpoint: body sealed, delivery in the outbox. */
async function relayCapture(b: Backends, endpoint: Endpoint, input: RelayInput = {}) {
  const body = input.body ?? Buffer.from('{"hello":"world"}');
  const settings = JSON.parse(endpoint.forwardJson) as { url: string };
  const events = await appendCaptures(b.catalog, b.sealer, [
    {
      accountId: endpoint.accountId,
      endpointId: endpoint.id,
      ...(input.method ? { method: input.method } : {}),
      path: input.path ?? "",
      ...(input.headers ? { headers: input.headers } : {}),
      provider: input.provider ?? endpoint.provider,
      body,
      forwardTarget: settings.url + (input.path ?? ""),
      forwardScheduled: true,
    },
  ]);
  return { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: events[0]!.id };
}

async function relayEndpoint(b: Backends, forward: Record<string, unknown>, fields: Partial<Omit<Endpoint, "$typeName">> = {}) {
  return b.createEndpoint({ forwardJson: JSON.stringify(forward), ...fields });
}

function startForwarder(b: Backends, options: Partial<ForwarderOptions> = {}, now?: () => number) {
  const forwarder = createForwarder(
    { ...b.deps, bus: b.bus, ...(now ? { now } : {}) },
    { connectTimeoutMs: 2000, retryBaseMs: 20, pollMs: 50, claimMs: 10_000, ...options },
  );
  forwarder.start();
  onCleanup(() => forwarder.stop());
  return forwarder;
}

type Ref = { accountId: string; endpointId: string; eventId: string };

/** The stored event as a reader sees it: its request and its forward's URLs opened. */
const eventOf = async (b: Backends, ref: Ref): Promise<Event> =>
  (await openCapture(b.deps.opener, (await b.catalog.getEvent({ ...ref, markRead: false })).event!)).event;

/** Waits until the delivery left `pending` (or `until` holds) and answers the event. */
async function settled(b: Backends, ref: Ref, until: (e: Event) => boolean = (e) => e.forward?.state !== "pending") {
  return vi.waitFor(
    async () => {
      const event = await eventOf(b, ref);
      if (!until(event)) throw new Error(`still ${event.forward?.state} after ${event.deliveries[0]?.attempts.length} attempts`);
      return event;
    },
    { timeout: 15_000, interval: 20 },
  );
}

/** A destination answering the given statuses in turn (the last one from then on). */
function statuses(...list: number[]) {
  let i = 0;
  return startTarget((_req, res) => {
    res.statusCode = list[Math.min(i++, list.length - 1)]!;
    res.end(`answer ${i}`);
  });
}

describe("the relay outbox worker", () => {
  it("makes three catalog calls per attempt: the claim, LoadDelivery (event and destination in one call), the record", async () => {
    const calls: string[] = [];
    const counting: Interceptor = (next) => async (req) => {
      calls.push(req.method.name);
      return next(req);
    };
    const b = await startBackends({ catalogInterceptors: [counting] });
    const destination = await statuses(500, 200);
    const ep = await relayEndpoint(b, { url: `${destination.url}/hooks` });
    const ref = await relayCapture(b, ep);
    calls.length = 0;
    const forwarder = startForwarder(b);
    // Waited for without reading the catalog, so every call counted is the worker's; stop()
    // returns once the attempts in flight are recorded.
    await vi.waitFor(() => expect(destination.received).toHaveLength(2), { timeout: 15_000, interval: 20 });
    await forwarder.stop();
    const count = (method: string) => calls.filter((m) => m === method).length;
    // Two attempts (500, then 200): each loaded once and recorded once; nothing else read.
    expect(count("LoadDelivery")).toBe(2);
    expect(count("RecordForwardAttempt")).toBe(2);
    expect(calls.filter((m) => !["ClaimDeliveries", "LoadDelivery", "RecordForwardAttempt"].includes(m))).toEqual([]);
    // Each attempt was handed out by a claim (claims that found nothing due are polls, not attempts).
    expect(count("ClaimDeliveries")).toBeGreaterThanOrEqual(2);
    expect((await settled(b, ref)).forward?.state).toBe("delivered");
  });

  it("retries 500, 500 then delivers on 200: attempts 1, 2, 3 (initial, retry, retry), numbered and identified", async () => {
    const b = await startBackends();
    const destination = await statuses(500, 500, 200);
    const ep = await relayEndpoint(b, { url: `${destination.url}/hooks` });
    const ref = await relayCapture(b, ep);
    startForwarder(b);

    const event = await settled(b, ref);
    expect(event.forward).toMatchObject({ state: "delivered", target: `${destination.url}/hooks` });
    expect(event.forward!.nextAttemptAtMs).toBeUndefined();
    expect(event.deliveries[0]!.attempts.map((a) => [a.n, a.trigger, a.status, a.error])).toEqual([
      [1, "initial", 500, ""],
      [2, "retry", 500, ""],
      [3, "retry", 200, ""],
    ]);
    expect(event.deliveries[0]!.attempts[2]!.url).toBe(`${destination.url}/hooks`);
    expect(destination.received.map((r) => valuesOf(r.headers, "x-whc-attempt"))).toEqual([["1"], ["2"], ["3"]]);
    expect(destination.received.map((r) => valuesOf(r.headers, "x-whc-delivery-id"))).toEqual([[ref.eventId], [ref.eventId], [ref.eventId]]);
    // Each answer's body is kept sealed with its attempt, readable with the event's key.
    const last = event.deliveries[0]!.attempts[2]!;
    const opened = await b.opener.open(ref.endpointId, last.body!);
    expect(opened.ok && opened.plaintext.toString()).toBe("answer 3");
    expect(last.headers.map((h) => h.name.toLowerCase())).toContain("content-length");
  });

  it("fails a delivery on another 4xx after one attempt, and exhausts one that always gets 503", async () => {
    const b = await startBackends();
    const rejecting = await statuses(422);
    const failing = await statuses(503);
    const rejected = await relayCapture(b, await relayEndpoint(b, { url: rejecting.url }));
    const exhausted = await relayCapture(b, await relayEndpoint(b, { url: failing.url, maxAttempts: 3 }));
    startForwarder(b);

    const r = await settled(b, rejected);
    expect(r.forward).toMatchObject({ state: "failed" });
    expect(r.deliveries[0]!.attempts.map((a) => a.status)).toEqual([422]);
    const e = await settled(b, exhausted);
    expect(e.forward).toMatchObject({ state: "exhausted" });
    expect(e.deliveries[0]!.attempts.map((a) => [a.n, a.status])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
    ]);
    expect(rejecting.received).toHaveLength(1);
    expect(failing.received).toHaveLength(3);
  });

  it("honours a 429's Retry-After: 0 retries at once (the backoff would be a minute), 1 puts it off a second", async () => {
    const b = await startBackends();
    let first = true;
    const now = await startTarget((_req, res) => {
      if (first) {
        first = false;
        res.writeHead(429, { "Retry-After": "0" });
      }
      res.end();
    });
    const later = await startTarget((_req, res) => {
      res.writeHead(429, { "Retry-After": "1" });
      res.end();
    });
    const soon = await relayCapture(b, await relayEndpoint(b, { url: now.url }));
    const putOff = await relayCapture(b, await relayEndpoint(b, { url: later.url }));
    startForwarder(b, { retryBaseMs: 60_000 });

    const delivered = await settled(b, soon);
    expect(delivered.deliveries[0]!.attempts.map((a) => a.status)).toEqual([429, 200]);
    const waiting = await settled(b, putOff, (e) => (e.deliveries[0]?.attempts.length ?? 0) >= 1);
    const attempt = waiting.deliveries[0]!.attempts[0]!;
    const due = Number(waiting.forward!.nextAttemptAtMs) - Number(attempt.atMs) - Number(attempt.durationMs);
    expect(waiting.forward!.state).toBe("pending");
    expect(due).toBeGreaterThanOrEqual(990);
    expect(due).toBeLessThan(5000);
  });

  it("sends the exact body bytes, the sub-path and query, and no hop-by-hop headers or Host", async () => {
    const b = await startBackends();
    const destination = await startTarget();
    const body = Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28]), Buffer.from('{"x":"é"}'), Buffer.from([13, 10, 0])]);
    const ref = await relayCapture(b, await relayEndpoint(b, { url: `${destination.url}/in/` }), {
      method: "PUT",
      path: "/ci/build?x=1&y=%20&z",
      body,
      headers: [
        ["Content-Type", "application/octet-stream"],
        ["X-Custom", "keep me"],
        ["X-Repeat", "one"],
        ["X-Repeat", "two"],
        ["Host", "original.example"],
        ["Content-Length", "999"],
        ["Connection", "keep-alive"],
        ["Keep-Alive", "timeout=5"],
        ["Transfer-Encoding", "chunked"],
        ["Upgrade", "websocket"],
        ["Proxy-Authorization", "Basic eDp5"],
        ["X-Forwarded-For", "203.0.113.1"],
        // A capture that came through another forwarder: ours replace its numbering.
        ["X-Whc-Attempt", "7"],
      ],
    });
    startForwarder(b);

    expect((await settled(b, ref)).forward!.state).toBe("delivered");
    const got = destination.received[0]!;
    expect(got.method).toBe("PUT");
    expect(got.url).toBe("/in/ci/build?x=1&y=%20&z");
    expect(got.body.equals(body)).toBe(true);
    expect(valuesOf(got.headers, "host")).toEqual([`127.0.0.1:${destination.port}`]);
    expect(valuesOf(got.headers, "content-length")).toEqual([String(body.length)]);
    const names = got.headers.map(([n]) => n.toLowerCase());
    for (const dropped of ["keep-alive", "transfer-encoding", "upgrade", "proxy-authorization", "x-forwarded-for"]) expect(names).not.toContain(dropped);
    expect(valuesOf(got.headers, "x-repeat")).toEqual(["one", "two"]);
    expect(valuesOf(got.headers, "x-custom")).toEqual(["keep me"]);
    expect(valuesOf(got.headers, "x-whc-attempt")).toEqual(["1"]);
  });

  it("forwards a Stripe event the stripe library verifies: as signed, and re-signed with the target secret", async () => {
    const b = await startBackends();
    const stripe = new Stripe("sk_test_x");
    const payload = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: { object: { amount: 1200 } } });
    const verifiedWith = (secret: string) =>
      startTarget((_req, res, got) => {
        try {
          const event = stripe.webhooks.constructEvent(got.body, valuesOf(got.headers, "stripe-signature")[0]!, secret);
          res.statusCode = event.type === "invoice.paid" ? 200 : 400;
        } catch {
          res.statusCode = 400;
        }
        res.end();
      });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" });
    const headers: [string, string][] = [
      ["Content-Type", "application/json"],
      ["Stripe-Signature", header],
    ];

    const asSigned = await verifiedWith("whsec_source");
    const plain = await relayCapture(b, await relayEndpoint(b, { url: asSigned.url }, { provider: "stripe" }), { headers, body: Buffer.from(payload) });
    const resigned = await verifiedWith("whsec_target");
    const endpoint = await relayEndpoint(b, { url: resigned.url }, { provider: "stripe", sealedTargetSecret: await b.sealSecret("whsec_target") });
    const withSecret = await relayCapture(b, endpoint, { headers, body: Buffer.from(payload), provider: "stripe" });
    startForwarder(b);

    expect((await settled(b, plain)).deliveries[0]!.attempts.map((a) => a.status)).toEqual([200]);
    expect((await settled(b, withSecret)).deliveries[0]!.attempts.map((a) => a.status)).toEqual([200]);
    expect(valuesOf(resigned.received[0]!.headers, "stripe-signature")[0]).not.toBe(header);
  });

  it("fans out (design §17): each destination its own attempts, target, secret and digest; a removed destination fails without sending", async () => {
    const b = await startBackends();
    const stripe = new Stripe("sk_test_x");
    const payload = JSON.stringify({ id: "evt_2", object: "event", type: "invoice.paid", data: {} });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" });
    const flaky = await statuses(503, 200);
    const signed = await startTarget((_req, res, got) => {
      try {
        stripe.webhooks.constructEvent(got.body, valuesOf(got.headers, "stripe-signature")[0]!, "whsec_billing");
        res.statusCode = 200;
      } catch {
        res.statusCode = 400;
      }
      res.end();
    });
    const [a, bId, gone] = ["0190a000-0000-7000-8000-00000000000a", "0190a000-0000-7000-8000-00000000000b", "0190a000-0000-7000-8000-00000000000c"];
    const destinations = [
      { id: a, name: "flaky", url: `${flaky.url}/a`, keepPath: true, timeoutMs: 5000, maxAttempts: 3 },
      { id: bId, name: "billing", url: `${signed.url}/b`, keepPath: false, timeoutMs: 5000, maxAttempts: 3, targetSecretSet: true },
    ];
    const endpoint = await b.createEndpoint({
      provider: "stripe",
      forwardJson: JSON.stringify(destinations),
      sealedDestinationSecrets: await b.sealSecret(JSON.stringify({ [bId]: "whsec_billing" })),
    });
    const [captured] = await appendCaptures(b.catalog, b.sealer, [
      {
        accountId: endpoint.accountId,
        endpointId: endpoint.id,
        path: "/in",
        provider: "stripe",
        headers: [
          ["Content-Type", "application/json"],
          ["Stripe-Signature", header],
        ],
        body: payload,
        deliveries: [
          { destinationId: a, target: `${flaky.url}/a/in` },
          { destinationId: bId, target: `${signed.url}/b` },
          { destinationId: gone, target: "https://gone.example.test/" },
        ],
        forwardScheduled: true,
      },
    ]);
    const ref = { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: captured!.id };
    startForwarder(b);
    const event = await settled(b, ref);
    const byId = new Map(event.deliveries.map((d) => [d.destinationId, d]));
    expect(event.forward?.state).toBe("failed");
    expect(byId.get(a)).toMatchObject({ state: "delivered", target: `${flaky.url}/a/in` });
    expect(byId.get(a)!.attempts.map((x) => [x.n, x.status])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    expect(byId.get(bId)!.attempts.map((x) => [x.n, x.status])).toEqual([[1, 200]]);
    expect(byId.get(gone)).toMatchObject({ state: "failed" });
    expect(byId.get(gone)!.attempts.map((x) => [x.n, x.error, x.requestSha256])).toEqual([[1, "target_not_allowed", ""]]);
    // Every attempt that went out records the digest of the bytes sent: the stored body, exactly.
    const sha = createHash("sha256").update(payload).digest("hex");
    expect([...byId.get(a)!.attempts, ...byId.get(bId)!.attempts].map((x) => x.requestSha256)).toEqual([sha, sha, sha]);
    expect(flaky.received.map((r) => valuesOf(r.headers, "stripe-signature")[0])).toEqual([header, header]);
    expect(valuesOf(signed.received[0]!.headers, "stripe-signature")[0]).not.toBe(header);
    const series = await b.metrics.registry.getSingleMetricAsString("whc_forward_destination_attempts_total");
    expect(series).toContain(`destination="${a}",outcome="rejected"`);
    expect(series).toContain(`destination="${gone}",outcome="refused"`);
    expect(series).not.toContain(flaky.url);
  });

  it("shares the outbox between two workers: every (event, attempt) is sent exactly once", async () => {
    const b = await startBackends({ slotsPerOrigin: 8 });
    const sent: string[] = [];
    const destination = await startTarget((_req, res, got) => {
      const n = valuesOf(got.headers, "x-whc-attempt")[0];
      sent.push(`${valuesOf(got.headers, "x-whc-delivery-id")[0]} ${n}`);
      // Every first attempt fails, so that retries go through the claims too.
      res.statusCode = n === "1" ? 503 : 200;
      res.end();
    });
    const ep = await relayEndpoint(b, { url: destination.url });
    // Fifty first attempts failing in a row would open the destination's breaker (design §18),
    // which this test is not about: its threshold is set above them.
    const destinations = [{ id: ep.id, name: "destination-1", url: destination.url, breaker: { failures: 100, probeAfterMs: 30_000 } }];
    await b.catalog.updateEndpoint({ accountId: ep.accountId, endpointId: ep.id, patch: { forwardJson: JSON.stringify(destinations) } });
    const refs = [];
    for (let i = 0; i < 50; i += 1) refs.push(await relayCapture(b, ep));
    const one = startForwarder(b);
    const two = startForwarder(b);
    expect(one.owner).not.toBe(two.owner);

    const histories = new Set<string>();
    for (const ref of refs) histories.add((await settled(b, ref)).deliveries[0]!.attempts.map((a) => `${a.n}: ${a.status} ${a.error}`).join(", "));
    // No attempt went without egress capacity either: the workers wait their turn for the origin.
    expect([...histories]).toEqual(["1: 503 , 2: 200 "]);
    expect(sent).toHaveLength(100);
    expect(new Set(sent).size).toBe(100);
    expect((await b.catalog.getOutboxStats({})).pending).toBe(0n);
  });

  it("refuses a private destination when private targets are not allowed: target_not_allowed, nothing sent", async () => {
    const b = await startBackends({ allowPrivate: false });
    const trap = await startTarget();
    const ref = await relayCapture(b, await relayEndpoint(b, { url: `http://localhost:${trap.port}/` }));
    startForwarder(b);

    const event = await settled(b, ref);
    expect(event.forward).toMatchObject({ state: "failed" });
    expect(event.deliveries[0]!.attempts.map((a) => [a.n, a.status, a.error])).toEqual([[1, 0, "target_not_allowed"]]);
    expect(trap.connections()).toBe(0);
  });

  it("retries a refused connection and records why", async () => {
    const b = await startBackends();
    const ref = await relayCapture(b, await relayEndpoint(b, { url: `http://127.0.0.1:${await refusingPort()}/`, maxAttempts: 2 }));
    startForwarder(b);

    const event = await settled(b, ref);
    expect(event.forward!.state).toBe("exhausted");
    expect(event.deliveries[0]!.attempts.map((a) => [a.status, a.error])).toEqual([
      [0, "connection_refused"],
      [0, "connection_refused"],
    ]);
  });

  it("fails a delivery whose endpoint lost its forward settings, without sending", async () => {
    const b = await startBackends();
    const destination = await startTarget();
    const ep = await relayEndpoint(b, { url: destination.url });
    const ref = await relayCapture(b, ep);
    await b.catalog.updateEndpoint({ accountId: ep.accountId, endpointId: ep.id, patch: { forwardJson: "", operatingMode: "capture" } });
    startForwarder(b);

    const event = await settled(b, ref);
    expect(event.forward).toMatchObject({ state: "failed" });
    expect(event.deliveries[0]!.attempts.map((a) => [a.n, a.error, a.url])).toEqual([[1, "target_not_allowed", destination.url]]);
    expect(destination.received).toHaveLength(0);
  });

  it("keeps going through a catalog outage", async () => {
    let down = true;
    let refusedClaims = 0;
    const outage: Interceptor = (next) => async (req) => {
      if (down && req.method.name === "ClaimDeliveries") {
        refusedClaims += 1;
        throw new AppError("service_unavailable", "catalog down (test)");
      }
      return next(req);
    };
    const b = await startBackends({ catalogInterceptors: [outage] });
    const destination = await startTarget();
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    startForwarder(b, { pollMs: 20 });
    await vi.waitFor(() => expect(refusedClaims).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 10 });
    down = false;
    expect((await settled(b, ref)).forward!.state).toBe("delivered");
  });

  it("claims at once when woken by the bus, and stop() lets the attempt in flight finish and be recorded", async () => {
    const b = await startBackends();
    let release: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    let answer: () => void = () => undefined;
    const destination = await startTarget((_req, res) => {
      answer = () => res.end("late");
      release();
    });
    // Polling alone would take a minute: the wake-up is what starts this delivery.
    const forwarder = startForwarder(b, { pollMs: 60_000 });
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    b.bus.publishOutboxWake();
    await arrived;

    const stopped = forwarder.stop();
    answer();
    await stopped;
    const event = await eventOf(b, ref);
    expect(event.forward).toMatchObject({ state: "delivered" });
    expect(event.deliveries[0]!.attempts).toHaveLength(1);
  });

  it("looks again when its own retry falls due, without waiting for the next poll", async () => {
    const b = await startBackends();
    const destination = await statuses(500, 500, 200);
    startForwarder(b, { pollMs: 60_000 });
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    b.bus.publishOutboxWake();
    expect((await settled(b, ref)).deliveries[0]!.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
  });

  it("retries on time with its clock ahead of the catalog's: the catalog says when the next delivery falls due", async () => {
    // Its retries are stored 300 ms later than it thinks (the catalog's clock); a timer set by
    // its own clock would find nothing due and leave them to the next poll, a minute away.
    const b = await startBackends();
    const destination = await statuses(500, 500, 200);
    startForwarder(b, { pollMs: 60_000 }, () => Date.now() + 300);
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    b.bus.publishOutboxWake();
    expect((await settled(b, ref)).deliveries[0]!.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
  });

  it("a second worker takes a retry the first recorded, when it falls due", async () => {
    const b = await startBackends();
    const destination = await statuses(500, 200);
    // The retry falls due 320-480 ms after the first attempt: after the second worker's first claim.
    const first = startForwarder(b, { pollMs: 60_000, retryBaseMs: 400 });
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    b.bus.publishOutboxWake();
    await settled(b, ref, (e) => e.deliveries[0]?.attempts.length === 1);
    await first.stop();
    const second = startForwarder(b, { pollMs: 60_000, retryBaseMs: 400, owner: "second" });
    second.wake();
    const done = await settled(b, ref);
    expect(done.deliveries[0]!.attempts.map((a) => a.status)).toEqual([500, 200]);
  });

  it("counts attempts by trigger and outcome, final states, and reads the outbox at scrape", async () => {
    const b = await startBackends();
    const destination = await statuses(500, 200);
    const rejecting = await statuses(404);
    const ref = await relayCapture(b, await relayEndpoint(b, { url: destination.url }));
    const failed = await relayCapture(b, await relayEndpoint(b, { url: rejecting.url }));
    const forwarder = startForwarder(b);
    await settled(b, ref);
    await settled(b, failed);
    await forwarder.stop();
    // One delivery waits: no worker runs now.
    await relayCapture(b, await relayEndpoint(b, { url: destination.url }));

    const text = await b.metrics.registry.metrics();
    expect(text).toContain('whc_forward_attempts_total{trigger="initial",outcome="rejected"} 2');
    expect(text).toContain('whc_forward_attempts_total{trigger="retry",outcome="delivered"} 1');
    expect(text).toContain('whc_forward_attempts_total{trigger="manual",outcome="refused"} 0');
    expect(text).toContain('whc_forward_deliveries_total{state="delivered"} 1');
    expect(text).toContain('whc_forward_deliveries_total{state="failed"} 1');
    expect(text).toContain('whc_forward_deliveries_total{state="exhausted"} 0');
    expect(text).toContain("whc_forward_outbox_pending 1");
    expect(text).toMatch(/whc_forward_outbox_oldest_age_seconds \d/);
  });
});
