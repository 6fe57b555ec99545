import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

/**
 * Meta publishes no verification library on npm; its documentation gives the recipe, a hex
 * HMAC-SHA256 of the raw payload keyed by the App Secret, written `sha256=<hex>` in
 * X-Hub-Signature-256 (https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads).
 * The expected headers are built here from that recipe with node:crypto.
 */
const SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const PAYLOAD =
  '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=","timestamp":"1749416383","type":"text","text":{"body":"Does it come in another color?"}}]},"field":"messages"}]}]}';
const BODY = Buffer.from(PAYLOAD, "utf8");

const hex = (algorithm: "sha256" | "sha1", secret = SECRET) => createHmac(algorithm, secret).update(BODY).digest("hex");

function metaHeaders(secret = SECRET): HeaderPair[] {
  return [
    ["User-Agent", "facebookexternalua"],
    ["Content-Type", "application/json"],
    ["X-Hub-Signature", `sha1=${hex("sha1", secret)}`],
    ["X-Hub-Signature-256", `sha256=${hex("sha256", secret)}`],
  ];
}

const verify = verifierFor("meta", SECRET, BODY);
const withSignature = (value: string): HeaderPair[] => [["User-Agent", "facebookexternalua"], ["X-Hub-Signature-256", value]];

describe("meta verification", () => {
  it("accepts a signature made by Meta's documented recipe", () => {
    expect(verify(metaHeaders())).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify(withSignature(`SHA256=${hex("sha256").toUpperCase()}`)))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(metaHeaders("ffffffffffffffffffffffffffffffff")))).toBe("signature_mismatch");
    expect(verdict(verify(metaHeaders(), { body: Buffer.from(PAYLOAD.replace("color", "colour")) }))).toBe("signature_mismatch");
  });

  it("reports a missing signature, and does not accept the SHA-1 header alone", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(metaHeaders().filter(([n]) => n !== "X-Hub-Signature-256")))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no prefix", hex("sha256")],
    ["sha1 digest", `sha256=${hex("sha1")}`],
    ["non-hex", `sha256=${"z".repeat(64)}`],
  ])("reports a malformed signature (%s)", (_, value) => {
    expect(verdict(verify(withSignature(value)))).toBe("malformed_signature");
  });

  it("has no timestamp: an old delivery still verifies", () => {
    expect(verdict(verify(metaHeaders(), { nowMs: NOW_MS + 86_400_000 * 365 }))).toBe("verified");
  });
});

describe("meta signing", () => {
  it("writes both headers Meta sends, which verify", () => {
    const signed = signHeaders({ provider: "meta", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: metaHeaders() });
    expect(signed).toEqual([
      ["X-Hub-Signature-256", `sha256=${hex("sha256")}`],
      ["X-Hub-Signature", `sha1=${hex("sha1")}`],
    ]);
    expect(verdict(verify(signed))).toBe("verified");
    expect(verdict(verify(signed, { secret: Buffer.from("another") }))).toBe("signature_mismatch");
  });
});

describe("meta detection and event type", () => {
  it("is detected by Meta's user agent, never when GitHub's event header is there", () => {
    expect(detectProvider(metaHeaders())).toBe("meta");
    expect(detectProvider([["user-agent", "facebookexternalua"], ["x-hub-signature-256", "sha256=00"]])).toBe("meta");
    expect(detectProvider([...metaHeaders(), ["X-GitHub-Event", "push"]])).toBe("github");
    expect(detectProvider(metaHeaders().filter(([n]) => n !== "User-Agent"))).not.toBe("meta");
    expect(detectProvider([["User-Agent", "GitHub-Hookshot/044aadd"], ["X-Hub-Signature-256", `sha256=${hex("sha256")}`]])).not.toBe("meta");
  });

  it("is the body's top-level object", () => {
    expect(canonicalEventType("meta", metaHeaders(), BODY)).toBe("whatsapp_business_account");
    expect(canonicalEventType("meta", [], Buffer.from('{"object":"page","entry":[]}'))).toBe("page");
    expect(canonicalEventType("meta", [], Buffer.from('{"entry":[{"object":"x"}]}'))).toBe("");
  });
});
