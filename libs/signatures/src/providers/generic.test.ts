import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SECRET = "generic-shared-secret";
const BODY = Buffer.from('{"event":"thing.happened","id":1}');
const ACME = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };

/** The documented generic scheme, computed independently: hex HMAC-SHA256 of the body. */
const hexDigest = (body: Uint8Array = BODY, secret = SECRET) => createHmac("sha256", secret).update(body).digest("hex");

const verify = verifierFor("generic", SECRET, BODY);

describe("generic verification", () => {
  it("reads X-Signature with no prefix by default", () => {
    expect(verify([["X-Signature", hexDigest()]])).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify([["X-Signature", hexDigest()]], { genericSignatureHeader: "", genericSignaturePrefix: "" }))).toBe("verified");
  });

  it("reads the configured header and prefix", () => {
    expect(verdict(verify([["X-Acme-Signature", `sha256=${hexDigest()}`]], ACME))).toBe("verified");
    expect(verdict(verify([["X-Signature", `sha256=${hexDigest()}`]], ACME))).toBe("missing_signature");
  });

  it("accepts hex in either case, and the prefix in any case", () => {
    expect(verdict(verify([["X-Acme-Signature", `sha256=${hexDigest().toUpperCase()}`]], ACME))).toBe("verified");
    expect(verdict(verify([["X-Acme-Signature", `SHA256=${hexDigest()}`]], ACME))).toBe("verified");
  });

  it.each(["x-acme-signature", "X-ACME-SIGNATURE"])("matches the header name %s case-insensitively", (name) => {
    expect(verdict(verify([[name, `sha256=${hexDigest()}`]], ACME))).toBe("verified");
    expect(verdict(verify([[name, `sha256=${hexDigest()}`]], { ...ACME, genericSignatureHeader: "x-ACME-signature" }))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify([["X-Acme-Signature", `sha256=${hexDigest(BODY, "other")}`]], ACME))).toBe("signature_mismatch");
    expect(verdict(verify([["X-Acme-Signature", `sha256=${hexDigest()}`]], { ...ACME, body: Buffer.from("{}") }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["Content-Type", "application/json"]], ACME))).toBe("missing_signature");
  });

  it.each([
    ["no prefix", hexDigest()],
    ["another prefix", `sha1=${hexDigest()}`],
    ["non-hex", `sha256=${"x".repeat(64)}`],
    ["base64 digest", `sha256=${createHmac("sha256", SECRET).update(BODY).digest("base64")}`],
    ["short digest", "sha256=abcd"],
    ["prefix only", "sha256="],
  ])("reports a malformed value (%s)", (_, value) => {
    expect(verdict(verify([["X-Acme-Signature", value]], ACME))).toBe("malformed_signature");
  });

  it("reports a prefixed value as malformed when no prefix is configured", () => {
    expect(verdict(verify([["X-Signature", `sha256=${hexDigest()}`]]))).toBe("malformed_signature");
  });

  it("uses the first value when the header repeats", () => {
    expect(verdict(verify([["X-Signature", hexDigest()], ["x-signature", "0".repeat(64)]]))).toBe("verified");
    expect(verdict(verify([["X-Signature", "0".repeat(64)], ["x-signature", hexDigest()]]))).toBe("signature_mismatch");
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0xff, 0x00, 0xc0, 0x80, 0xfe]);
    expect(verdict(verify([["X-Signature", hexDigest(body)]], { body }))).toBe("verified");
    expect(verdict(verify([["X-Signature", hexDigest(body)]], { body: Buffer.from([0x00, 0xff, 0x00, 0xc0, 0x80, 0xff]) }))).toBe(
      "signature_mismatch",
    );
  });
});

describe("generic signing", () => {
  it("sets the configured header and prefix, which our verifier accepts", () => {
    const signed = signHeaders({ provider: "generic", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [], ...ACME });
    expect(signed).toEqual([["X-Acme-Signature", `sha256=${hexDigest()}`]]);
    expect(verdict(verify(signed, ACME))).toBe("verified");
    expect(verdict(verify(signed, { ...ACME, secret: Buffer.from("other") }))).toBe("signature_mismatch");
  });

  it("defaults to X-Signature without a prefix", () => {
    const signed = signHeaders({ provider: "generic", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["X-Signature", hexDigest()]]);
    expect(verdict(verify(signed))).toBe("verified");
  });

  it("round-trips a binary body", () => {
    const body = Buffer.from([0xff, 0xff, 0x00]);
    const signed = signHeaders({ provider: "generic", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
  });
});

describe("generic event type", () => {
  const type = (json: string) => canonicalEventType("generic", [], Buffer.from(json));

  it("is a top-level type, event or eventType string, in that order", () => {
    expect(type('{"type":"a","event":"b","eventType":"c"}')).toBe("a");
    expect(type('{"event":"b","eventType":"c"}')).toBe("b");
    expect(type('{"eventType":"c"}')).toBe("c");
    expect(type('{"type":5,"event":{"name":"x"},"eventType":"c"}')).toBe("c");
  });

  it("is empty when there is none", () => {
    expect(type('{"kind":"x"}')).toBe("");
    expect(type('{"data":{"type":"nested"}}')).toBe("");
    expect(type('[{"type":"in an array"}]')).toBe("");
    expect(type('"type"')).toBe("");
    expect(type('{"type":"truncated')).toBe("");
  });
});
