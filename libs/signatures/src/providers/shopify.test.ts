import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SECRET = "shopify-app-client-secret";
const BODY = Buffer.from('{"id":820982911946154508,"email":"jon@example.com"}');

/** Shopify's documented algorithm, computed independently of the library. */
const shopifyDigest = (body: Uint8Array = BODY, secret = SECRET) => createHmac("sha256", secret).update(body).digest("base64");

const verify = verifierFor("shopify", SECRET, BODY);

describe("shopify verification", () => {
  it("accepts the documented base64 HMAC", () => {
    expect(verify([["X-Shopify-Hmac-Sha256", shopifyDigest()]])).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
  });

  it.each(["x-shopify-hmac-sha256", "X-SHOPIFY-HMAC-SHA256"])("matches the header name %s case-insensitively", (name) => {
    expect(verdict(verify([[name, shopifyDigest()]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest(BODY, "other")]]))).toBe("signature_mismatch");
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest(Buffer.from("{}"))]]))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([["X-Shopify-Topic", "orders/create"]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["not base64", "not base64 at all!"],
    ["too short", "AAAA"],
    ["hex instead of base64", createHmac("sha256", SECRET).update(BODY).digest("hex")],
    ["url-safe alphabet", "-".repeat(43) + "="],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", value]]))).toBe("malformed_signature");
  });

  it("refuses base64 that only decodes to the digest by ignoring its trailing bits", () => {
    const canonical = shopifyDigest();
    // The last character before "=" carries 2 data bits and 4 bits that must be zero.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const last = alphabet.indexOf(canonical.at(-2)!);
    const loose = `${canonical.slice(0, -2)}${alphabet[last | 0b0001]}=`;
    expect(Buffer.from(loose, "base64")).toEqual(Buffer.from(canonical, "base64"));
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", loose]]))).toBe("malformed_signature");
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", canonical.replace(/=$/, "")]]))).toBe("verified");
  });

  it("uses the first value when the header repeats", () => {
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest()], ["X-Shopify-Hmac-Sha256", "AAAA"]]))).toBe("verified");
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest(BODY, "x")], ["X-Shopify-Hmac-Sha256", shopifyDigest()]]))).toBe(
      "signature_mismatch",
    );
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0xff, 0x80, 0xbf, 0x00, 0xf8]);
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest(body)]], { body }))).toBe("verified");
    expect(verdict(verify([["X-Shopify-Hmac-Sha256", shopifyDigest(body)]], { body: Buffer.from([0x00, 0xff, 0x80, 0xbf, 0x00]) }))).toBe(
      "signature_mismatch",
    );
  });
});

describe("shopify signing", () => {
  it("sets the documented base64 HMAC, which our verifier accepts", () => {
    const signed = signHeaders({ provider: "shopify", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["X-Shopify-Hmac-Sha256", shopifyDigest()]]);
    expect(verdict(verify(signed))).toBe("verified");
    expect(verdict(verify(signed, { secret: Buffer.from("other") }))).toBe("signature_mismatch");
  });

  it("round-trips a binary body", () => {
    const body = Buffer.from([0xfe, 0x00]);
    const signed = signHeaders({ provider: "shopify", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
  });
});

describe("shopify event type", () => {
  it("is the X-Shopify-Topic header", () => {
    expect(canonicalEventType("shopify", [["X-Shopify-Topic", "orders/create"]], BODY)).toBe("orders/create");
    expect(canonicalEventType("shopify", [["x-shopify-topic", " app/uninstalled "]], Buffer.from([0xff]))).toBe("app/uninstalled");
    expect(canonicalEventType("shopify", [], Buffer.from('{"type":"ignored"}'))).toBe("");
  });
});
