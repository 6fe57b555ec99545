import { afterEach, describe, expect, it } from "vitest";
import { openCapture } from "@whc/sealing";
import { Code, createClient } from "@connectrpc/connect";
import { ReplayService, type Endpoint } from "@whc/contracts";
import { appendCaptures, expectFailure } from "@whc/testing";
import { createReplayService } from "./service.js";
import { runCleanups, serve, startBackends, startTarget, valuesOf, type Backends } from "./testing/index.js";

/*
 * ForwardEvent, RecordClientAttempt and CheckForwardTarget through a typed client, as ingest
 * and the gateway call them, over the real catalog, crypto and local destinations.
 */

afterEach(runCleanups);

async function startService(options: { allowPrivateTargets?: boolean } = {}) {
  const b = await startBackends({ allowPrivate: options.allowPrivateTargets ?? true });
  const service = createReplayService(b.deps, {
    dailyLimit: 1,
    connectTimeoutMs: 2000,
    totalTimeoutMs: 5000,
    maxExcerptBytes: 4096,
  });
  return { b, replay: createClient(ReplayService, serve((r) => r.service(ReplayService, service))) };
}

/** A captured event of an endpoint (not in the outbox: these attempts are direct). */
async function captured(b: Backends, endpoint: Endpoint, path = "/sub?q=1") {
  const body = Buffer.from('{"id":"evt_1"}');
  const events = await appendCaptures(b.catalog, b.sealer, [{ accountId: endpoint.accountId, endpointId: endpoint.id, path, body }]);
  return { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: events[0]!.id };
}

describe("ForwardEvent", () => {
  it("sends now (manual) to the destination with the sub-path, answers the attempt and records it; the allowance is untouched", async () => {
    const { b, replay } = await startService();
    const destination = await startTarget((_req, res) => {
      res.writeHead(202, { "X-Answer": "yes" });
      res.end("accepted");
    });
    const ep = await b.createEndpoint({ forwardJson: JSON.stringify({ url: `${destination.url}/hooks` }) });
    const ref = await captured(b, ep);

    const { attempt } = await replay.forwardEvent({ ...ref, trigger: "manual" });
    expect(attempt).toMatchObject({ n: 1, trigger: "manual", status: 202, error: "", state: "delivered", url: `${destination.url}/hooks/sub?q=1` });
    expect(Buffer.from(attempt!.body).toString()).toBe("accepted");
    expect(attempt!.headers).toContainEqual(expect.objectContaining({ name: "X-Answer", value: "yes" }));
    expect(destination.received[0]!.url).toBe("/hooks/sub?q=1");
    expect(valuesOf(destination.received[0]!.headers, "x-whc-attempt")).toEqual(["1"]);

    const { event } = await openCapture(b.deps.opener, (await b.catalog.getEvent({ ...ref, markRead: false })).event!);
    expect(event!.forward).toMatchObject({ state: "delivered", target: `${destination.url}/hooks/sub?q=1` });
    expect(event!.deliveries[0]!.attempts.map((a) => [a.n, a.trigger, a.status])).toEqual([[1, "manual", 202]]);
    // A second manual attempt takes the next number.
    expect((await replay.forwardEvent({ ...ref })).attempt).toMatchObject({ n: 2, trigger: "manual" });
    expect((await b.catalog.getReplayUsage({ accountId: ref.accountId, day: new Date().toISOString().slice(0, 10) })).used).toBe(0);
  });

  it("answers a proxy's attempt with the whole body it asks for, while the record keeps 64 KiB", async () => {
    const { b, replay } = await startService();
    const big = Buffer.alloc(100 * 1024, 0x61);
    const destination = await startTarget((_req, res) => res.end(big));
    const ref = await captured(b, await b.createEndpoint({ forwardJson: JSON.stringify({ url: destination.url }), operatingMode: "proxy" }));

    const { attempt } = await replay.forwardEvent({ ...ref, trigger: "initial", maxResponseBytes: 1024 * 1024 });
    expect(attempt).toMatchObject({ trigger: "initial", status: 200, bodyTruncated: false });
    expect(Buffer.from(attempt!.body).equals(big)).toBe(true);
    const { event } = await openCapture(b.deps.opener, (await b.catalog.getEvent({ ...ref, markRead: false })).event!);
    const recorded = event!.deliveries[0]!.attempts[0]!;
    expect(recorded.bodyTruncated).toBe(true);
    const opened = await b.opener.open(ref.endpointId, recorded.body!);
    expect(opened.ok && opened.plaintext.length).toBe(64 * 1024);
  });

  it("records a failed attempt with its error and answers it, state failed", async () => {
    const { b, replay } = await startService({ allowPrivateTargets: false });
    const trap = await startTarget();
    const ref = await captured(b, await b.createEndpoint({ forwardJson: JSON.stringify({ url: `http://127.0.0.1:${trap.port}/` }) }));
    const { attempt } = await replay.forwardEvent({ ...ref, trigger: "manual" });
    expect(attempt).toMatchObject({ status: 0, error: "target_not_allowed", state: "failed" });
    expect(trap.connections()).toBe(0);
  });

  it("refuses an endpoint without forward settings (forward_not_configured), an unknown event, and a bad trigger", async () => {
    const { b, replay } = await startService();
    const ref = await captured(b, await b.createEndpoint({ operatingMode: "capture" }));
    await expectFailure(replay.forwardEvent({ ...ref, trigger: "manual" }), Code.FailedPrecondition, "forward_not_configured");
    const forwarding = await captured(b, await b.createEndpoint({ forwardJson: JSON.stringify({ url: "http://127.0.0.1:9/" }) }));
    await expectFailure(replay.forwardEvent({ ...forwarding, eventId: "0190a3c4-0000-7000-8000-000000000000" }), Code.NotFound, "not_found");
    await expectFailure(replay.forwardEvent({ ...forwarding, trigger: "retry" }), Code.InvalidArgument, "validation_failed");
  });
});

describe("RecordClientAttempt", () => {
  it("stores a cli attempt, its body sealed and readable back", async () => {
    const { b, replay } = await startService();
    const ref = await captured(b, await b.createEndpoint({ operatingMode: "capture" }));
    const { attempt } = await replay.recordClientAttempt({
      ...ref,
      url: "http://localhost:3000/webhooks/sub?q=1",
      status: 200,
      durationMs: 12n,
      headers: [{ name: "Content-Type", value: "text/plain" }],
      body: Buffer.from("ok from the local app"),
    });
    expect(attempt).toMatchObject({ n: 1, trigger: "cli", status: 200, error: "", state: "delivered", durationMs: 12n });

    const { event } = await openCapture(b.deps.opener, (await b.catalog.getEvent({ ...ref, markRead: false })).event!);
    expect(event!.forward).toMatchObject({ state: "delivered", target: "http://localhost:3000/webhooks/sub?q=1" });
    const recorded = event!.deliveries[0]!.attempts[0]!;
    expect(recorded).toMatchObject({ n: 1, trigger: "cli", status: 200, url: "http://localhost:3000/webhooks/sub?q=1", durationMs: 12n });
    expect(recorded.headers.map((h) => [h.name, h.value])).toEqual([["Content-Type", "text/plain"]]);
    const opened = await b.opener.open(ref.endpointId, recorded.body!);
    expect(opened.ok && opened.plaintext.toString()).toBe("ok from the local app");

    const failed = await replay.recordClientAttempt({ ...ref, url: "http://localhost:3000/webhooks", error: "connection_refused", durationMs: 1n });
    expect(failed.attempt).toMatchObject({ n: 2, status: 0, error: "connection_refused" });
  });

  it("refuses status and error together, neither, an unknown error, and an unknown event", async () => {
    const { b, replay } = await startService();
    const ref = await captured(b, await b.createEndpoint({ operatingMode: "capture" }));
    const base = { ...ref, url: "http://localhost:3000/", durationMs: 1n };
    await expectFailure(replay.recordClientAttempt({ ...base, status: 200, error: "timeout" }), Code.InvalidArgument, "validation_failed");
    await expectFailure(replay.recordClientAttempt(base), Code.InvalidArgument, "validation_failed");
    await expectFailure(replay.recordClientAttempt({ ...base, error: "gremlins" }), Code.InvalidArgument, "validation_failed");
    await expectFailure(replay.recordClientAttempt({ ...base, url: "", status: 200 }), Code.InvalidArgument, "validation_failed");
    await expectFailure(replay.recordClientAttempt({ ...base, status: 200, eventId: "0190a3c4-0000-7000-8000-000000000000" }), Code.NotFound, "not_found");
  });
});

describe("CheckForwardTarget", () => {
  it("gives the guard's verdict", async () => {
    const strict = (await startService({ allowPrivateTargets: false })).replay;
    expect(await strict.checkForwardTarget({ url: "http://127.0.0.1:3000/" })).toMatchObject({ allowed: false, reason: "address_not_allowed", category: "loopback" });
    expect(await strict.checkForwardTarget({ url: "ftp://example.test/" })).toMatchObject({ allowed: false, reason: "scheme_not_allowed", category: "" });
    const relaxed = (await startService({ allowPrivateTargets: true })).replay;
    expect(await relaxed.checkForwardTarget({ url: "http://127.0.0.1:3000/" })).toMatchObject({ allowed: true, reason: "" });
    expect(await relaxed.checkForwardTarget({ url: "http://169.254.169.254/" })).toMatchObject({ allowed: false, category: "metadata" });
  });
});
