import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// @hubspot/api-client is not installed and HubSpot publishes no v3 example digest (its worked
// examples are for v1/v2). The expected signature follows developers.hubspot.com "Validating
// requests", v3: base64 HMAC-SHA256, keyed with the app's client secret, of
// method + URI + body + X-HubSpot-Request-Timestamp (Unix ms), older than 5 minutes rejected,
// as HubSpot's PHP library's Signature::getHashedSignature('v3') concatenates them.
const SECRET = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy";
const URL = "https://hooks.example.com/in/ep_1?source=hubspot";
const PAYLOAD =
  '[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","appId":54321}]';
const BODY = Buffer.from(PAYLOAD);

const hubspotSignature = (timestamp: number, { secret = SECRET, uri = URL, body = PAYLOAD, method = "POST" } = {}) =>
  createHmac("sha256", secret).update(`${method}${uri}${body}${timestamp}`, "utf8").digest("base64");

const verify = verifierFor("hubspot", SECRET, BODY);
const at = (timestamp: number, signature = hubspotSignature(timestamp)): HeaderPair[] => [
  ["Content-Type", "application/json"],
  ["X-HubSpot-Signature", "232db2615f3d666fe21a8ec971ac7b5402d33b9a925784df3ca654d05f4817de"],
  ["X-HubSpot-Signature-Version", "v1"],
  ["X-HubSpot-Signature-v3", signature],
  ["X-HubSpot-Request-Timestamp", String(timestamp)],
];
const withUrl = { url: URL };

describe("hubspot verification", () => {
  it("accepts the documented v3 signature over the URL HubSpot called", () => {
    expect(verify(at(NOW_MS), withUrl)).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("decodes exactly the escapes HubSpot lists before signing the URI", () => {
    const called = "https://hooks.example.com/in/ep_1?next=%2Fa%3Ab%40c&name=Zo%C3%AB%20x";
    const signedUri = "https://hooks.example.com/in/ep_1?next=/a:b@c&name=Zo%C3%AB%20x";
    expect(verdict(verify(at(NOW_MS, hubspotSignature(NOW_MS, { uri: signedUri })), { url: called }))).toBe("verified");
    expect(verdict(verify(at(NOW_MS, hubspotSignature(NOW_MS, { uri: called })), { url: called }))).toBe("signature_mismatch");
  });

  it("rejects a wrong secret, another URL, another method, a changed body", () => {
    expect(verdict(verify(at(NOW_MS, hubspotSignature(NOW_MS, { secret: "other" })), withUrl))).toBe("signature_mismatch");
    expect(verdict(verify(at(NOW_MS), { url: "https://hooks.example.com/in/ep_2?source=hubspot" }))).toBe("signature_mismatch");
    expect(verdict(verify(at(NOW_MS)))).toBe("signature_mismatch");
    expect(verdict(verify(at(NOW_MS, hubspotSignature(NOW_MS, { method: "GET" })), withUrl))).toBe("signature_mismatch");
    expect(verdict(verify(at(NOW_MS), { ...withUrl, body: Buffer.from(`${PAYLOAD} `) }))).toBe("signature_mismatch");
  });

  it("reports a missing v3 header, even when the legacy signature came", () => {
    expect(verdict(verify([], withUrl))).toBe("missing_signature");
    expect(verdict(verify(at(NOW_MS).filter(([name]) => name !== "X-HubSpot-Signature-v3"), withUrl))).toBe("missing_signature");
  });

  it.each([
    ["no timestamp", [["X-HubSpot-Signature-v3", hubspotSignature(NOW_MS)]]],
    ["non-numeric timestamp", [["X-HubSpot-Signature-v3", hubspotSignature(NOW_MS)], ["X-HubSpot-Request-Timestamp", "soon"]]],
    ["hex signature", [["X-HubSpot-Signature-v3", "a".repeat(64)], ["X-HubSpot-Request-Timestamp", String(NOW_MS)]]],
    ["short signature", [["X-HubSpot-Signature-v3", "AAAA"], ["X-HubSpot-Request-Timestamp", String(NOW_MS)]]],
  ] as [string, HeaderPair[]][])("reports a malformed header (%s)", (_, headers) => {
    expect(verdict(verify(headers, withUrl))).toBe("malformed_signature");
  });

  it("rejects a timestamp more than 5 minutes away and accepts the edge", () => {
    expect(verdict(verify(at(NOW_MS - 301_000), withUrl))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(at(NOW_MS + 301_000), withUrl))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(at(NOW_MS - 300_000), withUrl))).toBe("verified");
    expect(verdict(verify(at(NOW_MS - 3_600_000, hubspotSignature(NOW_MS - 3_600_000, { secret: "other" })), withUrl))).toBe("signature_mismatch");
  });
});

describe("hubspot detection, event type and signing", () => {
  it("is detected by its own headers", () => {
    expect(detectProvider(at(NOW_MS))).toBe("hubspot");
    expect(detectProvider([["X-HubSpot-Signature", "00"]])).toBe("hubspot");
  });

  it("names the event by the first event's subscriptionType", () => {
    expect(canonicalEventType("hubspot", [], BODY)).toBe("contact.creation");
    expect(canonicalEventType("hubspot", [], Buffer.from(' \n[ {"subscriptionType":"deal.propertyChange"},{"subscriptionType":"x"}]'))).toBe("deal.propertyChange");
    expect(canonicalEventType("hubspot", [], Buffer.from('{"subscriptionType":"contact.deletion"}'))).toBe("contact.deletion");
    expect(canonicalEventType("hubspot", [], Buffer.from("[]"))).toBe("");
  });

  it("signs for the target URL at the fresh time, in milliseconds, and verify accepts it", () => {
    const nowMs = NOW_MS + 1_234;
    const signed = signHeaders({ provider: "hubspot", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: [], url: URL });
    expect(signed).toEqual([
      ["X-HubSpot-Request-Timestamp", String(nowMs)],
      ["X-HubSpot-Signature-v3", hubspotSignature(nowMs)],
    ]);
    expect(verdict(verify(signed, { ...withUrl, nowMs }))).toBe("verified");
    expect(verdict(verify(signed, { url: "https://elsewhere.example.com/", nowMs }))).toBe("signature_mismatch");
  });
});
