import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { randomBytes } from "node:crypto";
import { startOtlpReceiver, waitFor, type OtlpReceiver, type ReceivedSpan } from "@whc/testing";
import { CLUSTER_KEY, startCluster, type Cluster } from "./cluster.js";
import { startSingleProcess, type SingleProcess } from "./single-process.js";

/** Spans leave each process a tenth of a second after they end. */
const OTEL_ENV = { OTEL_BSP_SCHEDULE_DELAY: "100" };

/** A caller's W3C trace context: the trace id and the caller's own span id. */
function caller() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function spansUntil(receiver: OtlpReceiver, traceId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return waitFor(
    () => {
      const spans = receiver.spans().filter((s) => s.traceId === traceId);
      return done(spans) ? spans : undefined;
    },
    { what: `the spans of trace ${traceId}` },
  );
}

/**
 * One tree: every span's parent is the caller's span or another span of the trace, and one
 * span per id. Answers a lookup of a span's parent.
 */
function expectOneTree(spans: ReceivedSpan[], callerSpanId: string) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  expect(byId.size).toBe(spans.length);
  for (const s of spans) expect(s.parentSpanId === callerSpanId || byId.has(s.parentSpanId), `${s.service} ${s.name}`).toBe(true);
  return (s: ReceivedSpan) => byId.get(s.parentSpanId);
}

function one(spans: ReceivedSpan[], what: Partial<Pick<ReceivedSpan, "service" | "kind" | "name">>): ReceivedSpan {
  const found = spans.filter((s) => Object.entries(what).every(([k, v]) => s[k as keyof ReceivedSpan] === v));
  expect(found.length, JSON.stringify(what)).toBeGreaterThanOrEqual(1);
  return found[0]!;
}

describe("tracing across the distributed processes (OTLP/HTTP to a local receiver)", () => {
  let receiver: OtlpReceiver;
  let cluster: Cluster;
  let endpoint: { id: string; webhookUrl: string };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await startCluster({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...OTEL_ENV });
    endpoint = (await cluster.api.post("/v1/endpoints", { provider: "generic" })).body as typeof endpoint;
  });
  afterAll(async () => {
    await cluster?.shutdown();
    await receiver?.close();
  });

  it("follows a /v1 request sent with a traceparent from the gateway into the catalog and its store", async () => {
    const from = caller();
    const res = await fetch(`${cluster.gatewayUrl}/v1/endpoints/${endpoint.id}`, {
      headers: { authorization: `Bearer ${CLUSTER_KEY}`, traceparent: from.traceparent, "x-request-id": "otel-e2e-read" },
    });
    expect(res.status).toBe(200);
    const spans = await spansUntil(receiver, from.traceId, (s) =>
      s.some((x) => x.service === "gateway" && x.kind === "server") && s.some((x) => x.name === "CatalogStore.getEndpoint"),
    );
    const parentOf = expectOneTree(spans, from.spanId);

    const request = one(spans, { service: "gateway", kind: "server" });
    expect(request).toMatchObject({ parentSpanId: from.spanId, name: "GET /v1/endpoints/:id" });
    expect(request.attributes).toMatchObject({
      "http.route": "/v1/endpoints/:id",
      "http.request.method": "GET",
      "http.response.status_code": 200,
      "whc.request_id": "otel-e2e-read",
    });

    const store = one(spans, { service: "catalog", name: "CatalogStore.getEndpoint" });
    expect(store.attributes).toMatchObject({ "db.operation.name": "getEndpoint", "whc.request_id": "otel-e2e-read" });
    const rpcServer = parentOf(store)!;
    expect(rpcServer).toMatchObject({ service: "catalog", kind: "server", name: "webhookcapture.catalog.v1.CatalogService/GetEndpoint" });
    const rpcClient = parentOf(rpcServer)!;
    expect(rpcClient).toMatchObject({ service: "gateway", kind: "client", name: rpcServer.name });
    expect(parentOf(rpcClient)).toBe(request);

    // The gateway's log line of that request names its trace.
    const line = cluster.procs.gateway
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.requestId === "otel-e2e-read" && l.msg === "request");
    expect(line).toMatchObject({ trace_id: from.traceId });
  });

  it("follows a capture sent with a traceparent from ingest through its group commit into the catalog", async () => {
    const from = caller();
    const res = await fetch(`${cluster.ingestUrl}/h/${endpoint.id}/sub?x=1`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: from.traceparent },
      body: JSON.stringify({ hello: "trace" }),
    });
    expect(res.status).toBe(200);
    const spans = await spansUntil(
      receiver,
      from.traceId,
      (s) => s.some((x) => x.service === "ingest" && x.kind === "server") && s.some((x) => x.name === "CatalogStore.appendEvents"),
    );
    const parentOf = expectOneTree(spans, from.spanId);

    const capture = one(spans, { service: "ingest", kind: "server" });
    expect(capture).toMatchObject({ parentSpanId: from.spanId, name: "POST /h/{endpointId}" });
    expect(capture.attributes).toMatchObject({ "http.route": "/h/{endpointId}", "url.path": `/h/${endpoint.id}/sub`, "http.response.status_code": 200 });

    const store = one(spans, { service: "catalog", name: "CatalogStore.appendEvents" });
    const rpcServer = parentOf(store)!;
    expect(rpcServer).toMatchObject({ service: "catalog", kind: "server", name: "webhookcapture.catalog.v1.CatalogService/AppendEvents" });
    const rpcClient = parentOf(rpcServer)!;
    expect(rpcClient).toMatchObject({ service: "ingest", kind: "client" });
    const batch = parentOf(rpcClient)!;
    expect(batch).toMatchObject({ service: "ingest", name: "ingest append batch" });
    expect(batch.links).toContainEqual({ traceId: from.traceId, spanId: capture.spanId });
    expect(parentOf(batch)).toBe(capture);

    // The capture's notification left on NATS inside the same trace.
    expect(parentOf(one(spans, { service: "ingest", kind: "producer", name: "send whc.capture" }))).toBe(capture);
  });
});

describe("tracing in the all-in-one process", () => {
  let receiver: OtlpReceiver;
  let aio: SingleProcess | undefined;

  afterAll(async () => {
    await aio?.stop();
    await receiver?.close();
  });

  it("shows the gateway's calls to the catalog service and its store in the caller's trace", async () => {
    receiver = await startOtlpReceiver();
    aio = await startSingleProcess("whc-e2e-otel-", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...OTEL_ENV });

    const from = caller();
    const res = await fetch(`${aio.gatewayUrl}/v1/endpoints`, {
      headers: { authorization: `Bearer ${aio.firstKey}`, traceparent: from.traceparent },
    });
    expect(res.status).toBe(200);
    const spans = await spansUntil(receiver, from.traceId, (s) => s.some((x) => x.name === "CatalogStore.listEndpoints"));
    const parentOf = expectOneTree(spans, from.spanId);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["all-in-one"]));
    const store = one(spans, { name: "CatalogStore.listEndpoints" });
    expect(parentOf(store)).toMatchObject({ kind: "server", name: "webhookcapture.catalog.v1.CatalogService/ListEndpoints" });
    expect(one(spans, { kind: "server", name: "GET /v1/endpoints" }).parentSpanId).toBe(from.spanId);
  });
});
