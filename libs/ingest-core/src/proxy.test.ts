import { describe, it, expect, afterEach } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { AttemptResultSchema, CapturedEventSchema, EndpointSchema, HeaderSchema } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { forwardingOf, withForward } from "./forward.js";
import { targetUrl as forwardTarget } from "@whc/api-model";
import { callFailureReason, passedHeaders, PROXY_CALL_MARGIN_MS, PROXY_CALL_MAX_MS, proxyAnswerOf, replayDeadlineMs, sendProxyAnswer, type ProxyAnswer } from "./proxy.js";

const attempt = (fields: MessageInitShape<typeof AttemptResultSchema>) => create(AttemptResultSchema, { n: 1, trigger: "initial", ...fields });
const header = (name: string, value: string) => create(HeaderSchema, { name, value });
const text = (a: ProxyAnswer) => Buffer.from(a.body).toString();

describe("a relay or proxy endpoint's forwarding", () => {
  const endpoint = (operatingMode: string, forwardJson: string) => create(EndpointSchema, { operatingMode, forwardJson });

  it("is read from relay and proxy endpoints, with the defaults of the /v1 settings", () => {
    // Saved before destinations: one destination, under the endpoint's own id.
    const legacy = endpoint("relay", JSON.stringify({ url: "https://app.example.com/hooks" }));
    const relay = forwardingOf(legacy);
    expect(relay).toEqual({
      mode: "relay",
      destinations: [{ id: legacy.id, settings: { url: "https://app.example.com/hooks", keepPath: true, timeoutMs: 10_000, maxAttempts: 6 }, filter: undefined }],
    });
    const proxy = forwardingOf(endpoint("proxy", JSON.stringify({ url: "https://a.example/x", keepPath: false, timeoutMs: 200, maxAttempts: 1, targetSecretSet: true })));
    expect(proxy?.destinations.map((d) => d.settings)).toEqual([{ url: "https://a.example/x", keepPath: false, timeoutMs: 200, maxAttempts: 1 }]);
    // A proxy endpoint forwards to its first destination only, never filtered.
    const two = [
      { id: "0190a000-0000-7000-8000-00000000000a", name: "a", url: "https://a.example/", filter: { method: "PUT" } },
      { id: "0190a000-0000-7000-8000-00000000000b", name: "b", url: "https://b.example/" },
    ];
    expect(forwardingOf(endpoint("proxy", JSON.stringify(two)))?.destinations).toEqual([
      { id: two[0]!.id, settings: { url: "https://a.example/", keepPath: true, timeoutMs: 10_000, maxAttempts: 6 }, filter: undefined },
    ]);
    expect(forwardingOf(endpoint("relay", JSON.stringify(two)))?.destinations.map((d) => [d.id, d.filter === undefined])).toEqual([
      [two[0]!.id, false],
      [two[1]!.id, true],
    ]);
  });

  it("is none for other modes, missing settings and settings that do not parse", () => {
    const settings = JSON.stringify({ url: "https://a.example" });
    expect(forwardingOf(endpoint("capture", settings))).toBeUndefined();
    expect(forwardingOf(endpoint("metadata_only", settings))).toBeUndefined();
    expect(forwardingOf(endpoint("relay", ""))).toBeUndefined();
    expect(forwardingOf(endpoint("proxy", "{not json"))).toBeUndefined();
    expect(forwardingOf(endpoint("proxy", JSON.stringify({ url: "https://a.example", timeoutMs: 5 })))).toBeUndefined();
  });

  it("targets the url plus the sub-path and query with keepPath, the url alone without", () => {
    const settings = { url: "https://app.example.com/hooks", keepPath: true, timeoutMs: 1000, maxAttempts: 3 };
    expect(forwardTarget(settings, "/ci/run?x=1&y=%20")).toBe("https://app.example.com/hooks/ci/run?x=1&y=%20");
    expect(forwardTarget(settings, "")).toBe("https://app.example.com/hooks");
    expect(forwardTarget({ ...settings, keepPath: false }, "/ci?x=1")).toBe("https://app.example.com/hooks");
  });

  it("marks a relay capture's deliveries pending in the outbox and a proxy capture's pending outside it", () => {
    const settings = { url: "http://127.0.0.1:9/h", keepPath: true, timeoutMs: 1000, maxAttempts: 3 };
    const parts = (rest: string) => ({ method: "POST", rest, headers: [], body: undefined });
    const relay = create(CapturedEventSchema, {});
    const a = { id: "0190a000-0000-7000-8000-00000000000a", settings, filter: undefined };
    const b = { id: "0190a000-0000-7000-8000-00000000000b", settings: { ...settings, keepPath: false }, filter: undefined };
    expect(withForward(relay, { mode: "relay", destinations: [a, b] }, parts("/a?b=1"))).toEqual(["http://127.0.0.1:9/h/a?b=1", "http://127.0.0.1:9/h"]);
    expect(relay).toMatchObject({ deliveries: [{ destinationId: a.id }, { destinationId: b.id }], forwardScheduled: true });
    const proxy = create(CapturedEventSchema, {});
    expect(withForward(proxy, { mode: "proxy", destinations: [a] }, parts(""))).toEqual(["http://127.0.0.1:9/h"]);
    expect(proxy).toMatchObject({ deliveries: [{ destinationId: a.id }], forwardScheduled: false });
  });

  it("starts deliveries only to the destinations whose filter the capture matches; none matched, none scheduled", () => {
    const settings = { url: "http://127.0.0.1:9/h", keepPath: true, timeoutMs: 1000, maxAttempts: 3 };
    const endpoint = create(EndpointSchema, {
      id: "01a20000-0000-7000-8000-000000000000",
      operatingMode: "relay",
      forwardJson: JSON.stringify([
        { id: "0190a000-0000-7000-8000-00000000000a", name: "paid", ...settings, filter: { eventType: "invoice.paid" } },
        { id: "0190a000-0000-7000-8000-00000000000b", name: "tenant-a", ...settings, filter: { "headers.x-tenant": "a", "body.amount": { $gt: 10 } } },
        { id: "0190a000-0000-7000-8000-00000000000c", name: "all", ...settings },
      ]),
    });
    const forwarding = forwardingOf(endpoint)!;
    const route = (eventType: string, headers: [string, string][], body: string) => {
      const capture = create(CapturedEventSchema, { canonicalEventType: eventType, provider: "generic", verification: "unverified" });
      withForward(capture, forwarding, { method: "POST", rest: "", headers, body: Buffer.from(body) });
      return [capture.deliveries.map((d) => d.destinationId.slice(-1)).join(""), capture.forwardScheduled];
    };
    expect(route("invoice.paid", [["X-Tenant", "a"]], '{"amount":50}')).toEqual(["abc", true]);
    expect(route("invoice.paid", [["X-Tenant", "b"]], '{"amount":50}')).toEqual(["ac", true]);
    expect(route("other", [["X-Tenant", "a"]], '{"amount":5}')).toEqual(["c", true]);
    const onlyFiltered = forwardingOf(create(EndpointSchema, { ...endpoint, forwardJson: JSON.stringify(JSON.parse(endpoint.forwardJson).slice(0, 2)) }))!;
    const unmatched = create(CapturedEventSchema, { canonicalEventType: "other" });
    expect(withForward(unmatched, onlyFiltered, { method: "POST", rest: "", headers: [], body: undefined })).toEqual([]);
    expect(unmatched).toMatchObject({ deliveries: [], forwardScheduled: false });
  });
});

describe("the answer to a proxied capture", () => {
  it("is the destination's status, headers (repeats kept) and body", () => {
    const a = proxyAnswerOf(
      attempt({ status: 201, headers: [header("X-Custom", "1"), header("Set-Cookie", "a=1"), header("Set-Cookie", "b=2")], body: Buffer.from("{\"ok\":1}") }),
    );
    expect(a.status).toBe(201);
    expect(a.headers).toEqual([
      ["X-Custom", "1"],
      ["Set-Cookie", "a=1"],
      ["Set-Cookie", "b=2"],
    ]);
    expect(text(a)).toBe("{\"ok\":1}");
    expect(a.failure).toBeUndefined();
  });

  it("leaves out hop-by-hop headers, Content-Length and the headers Connection names", () => {
    const pairs: [string, string][] = [
      ["Connection", "keep-alive, X-Hop"],
      ["Keep-Alive", "timeout=5"],
      ["Transfer-Encoding", "chunked"],
      ["Content-Length", "12"],
      ["X-Hop", "1"],
      ["Upgrade", "h2c"],
      ["Content-Type", "application/json"],
      ["Content-Encoding", "gzip"],
    ];
    expect(passedHeaders(pairs)).toEqual([
      ["Content-Type", "application/json"],
      ["Content-Encoding", "gzip"],
    ]);
  });

  it("is 502 forward_failed with the attempt's error, 504 for a timeout", () => {
    const refused = proxyAnswerOf(attempt({ error: "connection_refused" }));
    expect([refused.status, JSON.parse(text(refused)), refused.failure]).toEqual([502, { error: "forward_failed", reason: "connection_refused" }, "connection_refused"]);
    const slow = proxyAnswerOf(attempt({ error: "timeout" }));
    expect([slow.status, JSON.parse(text(slow))]).toEqual([504, { error: "forward_failed", reason: "timeout" }]);
    expect(JSON.parse(text(proxyAnswerOf(attempt({ error: "target_not_allowed" }))))).toEqual({ error: "forward_failed", reason: "target_not_allowed" });
    expect(proxyAnswerOf(undefined).failure).toBe("service_unavailable");
  });

  it("is 502 when the destination's answer was cut at the inbound limit or had no usable status", () => {
    expect(proxyAnswerOf(attempt({ status: 200, body: Buffer.from("abc"), bodyTruncated: true })).failure).toBe("response_too_large");
    expect(proxyAnswerOf(attempt({ status: 0 })).failure).toBe("protocol_error");
  });

  it("says why the call to replay failed: its deadline is a timeout, anything unreachable service_unavailable", () => {
    expect(callFailureReason(new AppError("timeout", "no answer"))).toBe("timeout");
    expect(callFailureReason(new AppError("service_unavailable", "down"))).toBe("service_unavailable");
    expect(callFailureReason(new AppError("target_not_allowed", "refused"))).toBe("target_not_allowed");
    expect(callFailureReason(new AppError("not_found", "gone"))).toBe("service_unavailable");
    expect(callFailureReason(new Error("boom"))).toBe("service_unavailable");
  });

  it("waits up to the largest forward timeout plus the margin", () => {
    expect(PROXY_CALL_MAX_MS).toBe(60_000 + PROXY_CALL_MARGIN_MS);
    expect(replayDeadlineMs(10_000)).toBe(PROXY_CALL_MAX_MS);
    expect(replayDeadlineMs(600_000)).toBe(600_000);
  });
});

describe("sending a proxied answer", () => {
  const servers: http.Server[] = [];
  afterEach(() => servers.splice(0).forEach((s) => s.close()));

  async function through(answer: ProxyAnswer) {
    const server = http.createServer((_req, res) => void sendProxyAnswer(res, answer, "0193b0a4-0000-7000-8000-000000000001"));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: res.status, headers: res.headers, body: await res.text() };
  }

  it("frames the body with its own Content-Length", async () => {
    const res = await through({ status: 201, headers: [["X-Custom", "yes"]], body: Buffer.from("hello") });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-custom")).toBe("yes");
    expect(res.headers.get("content-length")).toBe("5");
    expect(res.body).toBe("hello");
  });

  it("sends no body with 204", async () => {
    const res = await through({ status: 204, headers: [], body: Buffer.from("ignored") });
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
  });

  it("answers 502 protocol_error when Node refuses one of the destination's headers", async () => {
    const res = await through({ status: 200, headers: [["X-Bad", "a\r\nb"]], body: Buffer.from("x") });
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body)).toEqual({ error: "forward_failed", reason: "protocol_error" });
  });
});
