import { describe, it, expect } from "vitest";
import { create } from "@bufbuild/protobuf";
import { EndpointSchema, EventSchema, ForwardSchema } from "@whc/contracts";
import { endpoint as endpointSchema, eventDetail, eventSummary } from "../index.js";
import { LISTEN_DESTINATION_ID, breakerSettingsOf } from "../index.js";
import { bodyJson, destinationNamesOf, endpointJson, eventDetailJson, eventSummaryJson, forwardViewOf, headersJson } from "./json.js";

describe("public JSON shapes", () => {
  it("groups repeated headers under their first spelling, in arrival order", () => {
    const h = headersJson([
      { name: "X-B", value: "1" },
      { name: "X-A", value: "2" },
      { name: "X-B", value: "3" },
    ]);
    expect(Object.keys(h)).toEqual(["X-B", "X-A"]);
    expect(h["X-B"]).toEqual(["1", "3"]);
  });

  it("shows header bytes that form UTF-8 decoded, and other bytes one character each", () => {
    // Values arrive one character per byte, as Node's parser hands them over.
    const asSent = (bytes: number[]) => Buffer.from(bytes).toString("latin1");
    const h = headersJson([
      { name: "X-Utf8", value: asSent([0x63, 0x61, 0x66, 0xc3, 0xa9]) },
      { name: "X-Latin1", value: asSent([0x63, 0x61, 0x66, 0xe9]) },
      { name: "X-Emoji", value: asSent([...Buffer.from("ok \u{1F600}")]) },
      { name: "X-Broken", value: asSent([0x61, 0xc3, 0x28]) },
      { name: "X-Ascii", value: "plain" },
    ]);
    expect(h["X-Utf8"]).toEqual(["café"]);
    expect(h["X-Latin1"]).toEqual(["café"]);
    expect(h["X-Emoji"]).toEqual(["ok \u{1F600}"]);
    expect(h["X-Broken"]).toEqual(["a\u00c3("]);
    expect(h["X-Ascii"]).toEqual(["plain"]);
  });

  it("returns UTF-8 text as is (a BOM included) and anything else as base64", () => {
    expect(bodyJson(Buffer.from("\uFEFFhé"))).toEqual({ body: "\uFEFFhé", bodyEncoding: "utf8" });
    const binary = Buffer.from([0xff, 0x00, 0xc3]);
    expect(bodyJson(binary)).toEqual({ body: binary.toString("base64"), bodyEncoding: "base64" });
    expect(bodyJson(new Uint8Array())).toEqual({ body: "", bodyEncoding: "utf8" });
  });

  it("derives decryption from the stored body and the known master keys", () => {
    const stored = create(EventSchema, { id: "e", bodyStored: true, body: { keyId: "k1" }, receivedAtMs: 0n });
    expect(eventSummaryJson(stored).decryption).toBe("ok");
    expect(eventSummaryJson(stored, { knownKeyIds: new Set(["k2"]) }).decryption).toBe("failed");
    const meta = create(EventSchema, { id: "e", bodyStored: false, receivedAtMs: 0n });
    expect(eventSummaryJson(meta).decryption).toBe("metadata_only");
    expect(eventSummaryJson(stored).searchMatchedTruncated).toBeUndefined();
    expect(eventSummaryJson(stored, { search: true }).searchMatchedTruncated).toBe(false);
  });

  it("shows the capture's sub-path and query in the detail exactly as stored, \"\" when it had none", () => {
    const ids = { id: "01a20000-0000-7000-8000-000000000001", endpointId: "01a20000-0000-7000-8000-000000000000", receivedAtMs: 0n };
    const detail = eventDetailJson(create(EventSchema, { ...ids, path: "/a/b?x=1&y=%20" }), { decryption: "metadata_only" });
    expect(detail.path).toBe("/a/b?x=1&y=%20");
    expect(eventDetail.strict().parse(detail).path).toBe("/a/b?x=1&y=%20");
    expect(eventDetailJson(create(EventSchema, ids), { decryption: "metadata_only" }).path).toBe("");
    expect("path" in eventSummaryJson(create(EventSchema, ids))).toBe(false);
  });

  /** Every destination's breaker: the defaults, closed, nothing held (no state stored). */
  const CLOSED = { failures: 5, probeAfterMs: 30_000, state: "closed", since: null, consecutiveFailures: 0, held: 0, nextProbeAt: null };

  it("shows the forward settings without the secret, only whether one is set", () => {
    const stored = JSON.stringify({ url: "http://127.0.0.1:3000/hooks", keepPath: false, timeoutMs: 2000, maxAttempts: 3 });
    const ep = create(EndpointSchema, { id: "01a20000-0000-7000-8000-000000000000", operatingMode: "relay", forwardJson: stored, targetSecretSet: true });
    const json = endpointJson(ep, "http://127.0.0.1:9");
    expect(json.forward).toEqual({ url: "http://127.0.0.1:3000/hooks", keepPath: false, timeoutMs: 2000, maxAttempts: 3, targetSecretSet: true });
    expect(endpointSchema.shape.forward.parse(json.forward)).toEqual(json.forward);
    // Saved before destinations: one destination, under the endpoint's own id (design §17).
    expect(json.destinations).toEqual([
      { id: ep.id, name: "destination-1", url: "http://127.0.0.1:3000/hooks", keepPath: false, timeoutMs: 2000, maxAttempts: 3, targetSecretSet: true, breaker: CLOSED, paused: false },
    ]);
    expect("forward" in endpointJson(create(EndpointSchema, {}), "http://127.0.0.1:9")).toBe(false);
    for (const forwardJson of ["not json", JSON.stringify({ url: "" }), "[{}]", '[{"id":"x"}]']) {
      const bad = endpointJson(create(EndpointSchema, { forwardJson }), "http://127.0.0.1:9");
      expect(["forward" in bad, "destinations" in bad], forwardJson).toEqual([false, false]);
    }
  });

  it("shows the destinations, and `forward` mirroring the first", () => {
    const a = { id: "0190a000-0000-7000-8000-00000000000a", name: "billing", url: "https://billing.example.test/h", keepPath: true, timeoutMs: 10000, maxAttempts: 6, targetSecretSet: true };
    const b = { id: "0190a000-0000-7000-8000-00000000000b", name: "audit", url: "https://audit.example.test/h", keepPath: false, timeoutMs: 500, maxAttempts: 1, filter: { eventType: { $in: ["x"] } }, transform: "function transform(r){return r}", rateLimit: { perSecond: 5 }, breaker: { failures: 5, probeAfterMs: 30000 }, paused: true, fromANewerVersion: 1 };
    const ep = create(EndpointSchema, { id: "01a20000-0000-7000-8000-000000000000", operatingMode: "relay", forwardJson: JSON.stringify([a, b]) });
    const json = endpointJson(ep, "http://127.0.0.1:9");
    expect(json.forward).toEqual({ url: a.url, keepPath: true, timeoutMs: 10000, maxAttempts: 6, targetSecretSet: true });
    const { fromANewerVersion: _ignored, ...bView } = b;
    expect(json.destinations).toEqual([
      { ...a, breaker: CLOSED, paused: false },
      { ...bView, breaker: CLOSED, targetSecretSet: false },
    ]);
    expect(endpointSchema.shape.destinations.parse(json.destinations)).toEqual(json.destinations);
    expect(forwardViewOf({ ...a, paused: false })).toEqual(json.forward);
  });

  it("shows each destination's breaker: its settings and its stored state; the next probe only while open and not paused (design §18)", () => {
    const a = { id: "0190a000-0000-7000-8000-00000000000a", name: "billing", url: "https://billing.example.test/h", breaker: { failures: 3, probeAfterMs: 2000 } };
    const b = { id: "0190a000-0000-7000-8000-00000000000b", name: "audit", url: "https://audit.example.test/h", paused: true };
    const breaker = (destinationId: string) => ({ destinationId, state: "open", sinceMs: 1_700_000_000_000n, consecutiveFailures: 4, held: 12n, nextProbeAtMs: 1_700_000_002_000n });
    const ep = create(EndpointSchema, {
      id: "01a20000-0000-7000-8000-000000000000",
      operatingMode: "relay",
      forwardJson: JSON.stringify([a, b]),
      breakers: [breaker(a.id), breaker(b.id)],
    });
    const [billing, audit] = endpointJson(ep, "http://127.0.0.1:9").destinations!;
    expect(billing!.breaker).toEqual({
      failures: 3,
      probeAfterMs: 2000,
      state: "open",
      since: "2023-11-14T22:13:20.000Z",
      consecutiveFailures: 4,
      held: 12,
      nextProbeAt: "2023-11-14T22:13:22.000Z",
    });
    // Paused: not probed, whatever its breaker says.
    expect(audit!.breaker).toMatchObject({ failures: 5, probeAfterMs: 30_000, state: "open", held: 12, nextProbeAt: null });
    expect(breakerSettingsOf(billing!.breaker)).toEqual({ failures: 3, probeAfterMs: 2000 });
    expect(breakerSettingsOf(audit!.breaker)).toBeUndefined();
  });

  it("presents the deliveries: the aggregate in the summary, each delivery and every attempt in the detail", () => {
    const failed = create(ForwardSchema, {
      destinationId: "0190a000-0000-7000-8000-00000000000a",
      state: "pending",
      target: "http://127.0.0.1:3000/hooks/ci",
      nextAttemptAtMs: 1_700_000_010_000n,
      attempts: [
        {
          n: 1,
          trigger: "initial",
          atMs: 1_700_000_000_000n,
          url: "http://127.0.0.1:3000/hooks/ci",
          durationMs: 41n,
          status: 500,
          headers: [{ name: "Content-Type", value: "text/plain" }],
          body: { keyId: "k1", ciphertext: new Uint8Array([1]), wrappedKey: new Uint8Array([2]) },
          bodyTruncated: true,
          error: "",
          requestSha256: "ab".repeat(32),
        },
        { n: 2, trigger: "retry", atMs: 1_700_000_002_000n, url: "http://127.0.0.1:3000/hooks/ci", durationMs: 5n, error: "connection_refused" },
      ],
    });
    const skipped = create(ForwardSchema, {
      destinationId: "0190a000-0000-7000-8000-00000000000b",
      state: "failed",
      target: "http://127.0.0.1:4000/",
      attempts: [{ n: 1, trigger: "initial", atMs: 1_700_000_001_000n, url: "http://127.0.0.1:4000/", error: "transform_failed", message: "TypeError: boom" }],
    });
    const e = create(EventSchema, {
      id: "01a20000-0000-7000-8000-000000000001",
      endpointId: "01a20000-0000-7000-8000-000000000000",
      receivedAtMs: 0n,
      forward: { state: "pending" },
      deliveries: [failed, skipped],
    });
    expect(eventSummaryJson(e).forwardState).toBe("pending");
    expect("forwardState" in eventSummaryJson(create(EventSchema, { receivedAtMs: 0n }))).toBe(false);
    expect(eventSummary.shape.forwardState.parse(eventSummaryJson(e).forwardState)).toBe("pending");

    const names = new Map([["0190a000-0000-7000-8000-00000000000a", "billing"]]);
    const detail = eventDetailJson(e, { decryption: "metadata_only", attemptBodies: [[Buffer.from("oops")]], destinationNames: names });
    const first = {
      n: 1,
      trigger: "initial",
      at: "2023-11-14T22:13:20.000Z",
      url: "http://127.0.0.1:3000/hooks/ci",
      durationMs: 41,
      status: 500,
      headers: { "Content-Type": ["text/plain"] },
      bodyBase64: Buffer.from("oops").toString("base64"),
      bodyTruncated: true,
      error: null,
      requestSha256: "ab".repeat(32),
      destinationId: failed.destinationId,
    };
    const second = {
      n: 2,
      trigger: "retry",
      at: "2023-11-14T22:13:22.000Z",
      url: "http://127.0.0.1:3000/hooks/ci",
      durationMs: 5,
      status: null,
      headers: {},
      bodyBase64: "",
      bodyTruncated: false,
      error: "connection_refused",
      requestSha256: null,
      destinationId: failed.destinationId,
    };
    const transform = {
      n: 1,
      trigger: "initial",
      at: "2023-11-14T22:13:21.000Z",
      url: "http://127.0.0.1:4000/",
      durationMs: 0,
      status: null,
      headers: {},
      bodyBase64: "",
      bodyTruncated: false,
      error: "transform_failed",
      message: "TypeError: boom",
      requestSha256: null,
      destinationId: skipped.destinationId,
    };
    expect(detail.forwardedResponse).toEqual({
      state: "pending",
      target: "http://127.0.0.1:3000/hooks/ci",
      nextAttemptAt: "2023-11-14T22:13:30.000Z",
      attempts: [first, transform, second],
      deliveries: [
        { destinationId: failed.destinationId, name: "billing", state: "pending", target: failed.target, nextAttemptAt: "2023-11-14T22:13:30.000Z", attempts: [first, second] },
        { destinationId: skipped.destinationId, name: "", state: "failed", target: skipped.target, nextAttemptAt: null, attempts: [transform] },
      ],
    });
    expect(eventDetail.shape.forwardedResponse.parse(detail.forwardedResponse)).toEqual(detail.forwardedResponse);
    // A body that could not be opened reads as empty; an event never forwarded has {}.
    const unopened = eventDetailJson(e, { decryption: "metadata_only" }).forwardedResponse as { attempts: { bodyBase64: string }[] };
    expect(unopened.attempts[0]!.bodyBase64).toBe("");
    expect(eventDetailJson(create(EventSchema, { receivedAtMs: 0n }), { decryption: "metadata_only" }).forwardedResponse).toEqual({});
  });

  it("shows whc listen's attempts as a delivery of its own", () => {
    expect(destinationNamesOf(undefined).get(LISTEN_DESTINATION_ID)).toBe("whc listen");
  });
});
