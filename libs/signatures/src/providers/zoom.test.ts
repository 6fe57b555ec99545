import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, TIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

/**
 * Zoom has no verification library on npm (Zoom Rivet is a whole app framework, not installed),
 * and its documentation publishes the recipe without a worked example
 * (https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events): the expected headers are
 * built here from that recipe with node:crypto, independently of the scheme under test.
 */
const SECRET = "lT6qJ1fhQ5y8Pf0Bq3NsZw";
const PAYLOAD =
  '{"event":"meeting.started","payload":{"account_id":"AAAAAABBBB","object":{"id":"1234567890","uuid":"4444AAAiAAAAAiAiAiiAii==","host_id":"x1yCzABCDEfg23HiJKl4mN","topic":"My Meeting","type":8,"start_time":"2021-07-13T21:44:51Z","timezone":"America/Los_Angeles","duration":60}},"event_ts":1626230691572}';
const BODY = Buffer.from(PAYLOAD, "utf8");

function zoomHeaders(timestampS: number | string = NOW_S, secret = SECRET, body: Uint8Array = BODY): HeaderPair[] {
  const digest = createHmac("sha256", secret).update(`v0:${timestampS}:`).update(body).digest("hex");
  return [
    ["x-zm-request-timestamp", String(timestampS)],
    ["x-zm-signature", `v0=${digest}`],
  ];
}

const verify = verifierFor("zoom", SECRET, BODY);

const withSignature = (value: string): HeaderPair[] => [["x-zm-request-timestamp", String(NOW_S)], ["x-zm-signature", value]];

describe("zoom verification", () => {
  it("accepts a signature made by Zoom's documented recipe", () => {
    expect(verify(zoomHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("matches header names case-insensitively, as Zoom's Title-Case spelling arrives", () => {
    const title = zoomHeaders().map(([n, v]) => [n.replace(/\b\w/g, (c) => c.toUpperCase()), v] as const);
    expect(verdict(verify(title))).toBe("verified");
  });

  it("rejects a wrong secret, a changed body and a changed timestamp", () => {
    expect(verdict(verify(zoomHeaders(NOW_S, "another-secret-token")))).toBe("signature_mismatch");
    expect(verdict(verify(zoomHeaders(), { body: Buffer.from(PAYLOAD.replace("started", "ended")) }))).toBe("signature_mismatch");
    const [, signature] = zoomHeaders() as [HeaderPair, HeaderPair];
    expect(verdict(verify([["x-zm-request-timestamp", String(NOW_S - 1)], signature]))).toBe("signature_mismatch");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["x-zm-request-timestamp", String(NOW_S)]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no v0= prefix", "a".repeat(64)],
    ["another version", `v1=${"a".repeat(64)}`],
    ["non-hex digest", `v0=${"z".repeat(64)}`],
    ["short digest", "v0=abcd"],
  ])("reports a malformed signature (%s)", (_, value) => {
    expect(verdict(verify(withSignature(value)))).toBe("malformed_signature");
  });

  it("reports a signature without a usable timestamp as malformed", () => {
    const [, signature] = zoomHeaders() as [HeaderPair, HeaderPair];
    expect(verdict(verify([signature]))).toBe("malformed_signature");
    expect(verdict(verify(zoomHeaders("2021-07-13T21:44:51Z")))).toBe("malformed_signature");
  });

  it("rejects timestamps 6 minutes old or ahead, and accepts the 5-minute edge", () => {
    expect(verdict(verify(zoomHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(zoomHeaders(NOW_S + 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(zoomHeaders(NOW_S - 300)))).toBe("verified");
    expect(verdict(verify(zoomHeaders(NOW_S - 3600), { toleranceS: 7200 }))).toBe("verified");
  });

  it("judges the signature before the timestamp", () => {
    expect(verdict(verify(zoomHeaders(NOW_S - 3600, "another-secret-token")))).toBe("signature_mismatch");
  });
});

describe("zoom signing", () => {
  it("writes the headers Zoom's recipe gives, which verify", () => {
    const signed = signHeaders({ provider: "zoom", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS + 999, headers: [] });
    expect(signed).toEqual(zoomHeaders());
    expect(verdict(verify(signed))).toBe("verified");
    expect(verdict(verify(signed, { secret: Buffer.from("another-secret-token") }))).toBe("signature_mismatch");
  });
});

describe("zoom detection and event type", () => {
  it("is detected from its own headers", () => {
    expect(detectProvider([...zoomHeaders(), ["x-zm-trackingid", "v=2.0;clid=aw1;rid=WEB_1"]])).toBe("zoom");
  });

  it("is the body's top-level event", () => {
    expect(canonicalEventType("zoom", zoomHeaders(), BODY)).toBe("meeting.started");
    expect(canonicalEventType("zoom", [], Buffer.from('{"event":"endpoint.url_validation","payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"}}'))).toBe(
      "endpoint.url_validation",
    );
    expect(canonicalEventType("zoom", [], Buffer.from('{"payload":{"event":"nested"}}'))).toBe("");
  });
});
