import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signHeaders, type HeaderPair } from "../index.js";
import type { Provider } from "../registry.js";
import { NOW_MS, NOW_S, TIMED_PASSED, UNTIMED_PASSED, verdict, verifierFor } from "./index.js";

/**
 * The tests every "HMAC of the raw body in one header" provider shares, and the ones every
 * provider delivering through Svix shares. Each provider's test file gives its own recipe,
 * payload and headers, then adds what is its own (detection, event type).
 */

/** A provider whose signature is an HMAC of the raw body, encoded, in one header, untimed. */
export interface BodyHmacCase {
  provider: Provider;
  /** The provider's name in prose: "Vercel". */
  name: string;
  secret: string;
  payload: string;
  header: string;
  /** What the provider sends besides the signature. */
  others: HeaderPair[];
  algorithm: "sha1" | "sha256";
  encoding: "hex" | "base64";
  /** Values the scheme must report as malformed, beyond the empty one. */
  malformed: [label: string, value: string][];
}

/**
 * The expected header is built from the provider's documented recipe with node:crypto,
 * independently of the scheme under test. Returns what the provider's own tests need.
 */
export function bodyHmacSuite(c: BodyHmacCase) {
  const body = Buffer.from(c.payload, "utf8");
  const signature = (secret = c.secret, bytes: Uint8Array = body) =>
    createHmac(c.algorithm, secret).update(bytes).digest(c.encoding);
  const signed = (value = signature()): HeaderPair[] => [...c.others, [c.header, value]];
  const verify = verifierFor(c.provider, c.secret, body);

  describe(`${c.provider} verification`, () => {
    it(`accepts a signature made by ${c.name}'s documented recipe`, () => {
      expect(verify(signed())).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
      expect(verdict(verify(signed().map(([n, v]) => [n.toLowerCase(), v] as const)))).toBe("verified");
    });

    it("rejects a wrong secret and a changed body", () => {
      expect(verdict(verify(signed(signature("another-secret"))))).toBe("signature_mismatch");
      expect(verdict(verify(signed(), { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
      expect(verdict(verify(signed(), { body: Buffer.from(c.payload + "\n") }))).toBe("signature_mismatch");
    });

    it("reports a missing signature", () => {
      expect(verdict(verify([]))).toBe("missing_signature");
      expect(verdict(verify(c.others))).toBe("missing_signature");
    });

    it.each([["empty", ""] as [string, string], ...c.malformed])("reports a malformed signature (%s)", (_, value) => {
      expect(verdict(verify(signed(value)))).toBe("malformed_signature");
    });

    it("has no timestamp: an old delivery still verifies", () => {
      expect(verdict(verify(signed(), { nowMs: NOW_MS + 86_400_000 * 365 }))).toBe("verified");
    });
  });

  describe(`${c.provider} signing`, () => {
    it(`writes the header ${c.name}'s recipe gives, which verifies`, () => {
      const headers = signHeaders({ provider: c.provider, secret: Buffer.from(c.secret), body, nowMs: NOW_MS, headers: signed() });
      expect(headers).toEqual([[c.header, signature()]]);
      expect(verdict(verify(headers))).toBe("verified");
      expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
    });
  });

  return { body, signature, signed };
}

/** A provider delivering through Svix: Standard Webhooks under svix- header names. */
export interface SvixCase {
  provider: Provider;
  secret: string;
  payload: string;
  /** The event type in the payload, and another to change the body with. */
  eventType: string;
  otherEventType: string;
}

/**
 * The signatures are made by the standardwebhooks library (svix itself needs Node 22).
 * Returns the headers builder for the provider's own tests.
 */
export function svixSuite(c: SvixCase) {
  const body = Buffer.from(c.payload, "utf8");
  const library = new Webhook(c.secret);
  const svixHeaders = (timestampS = NOW_S, wh = library): HeaderPair[] => {
    const id = "msg_2Lh9KRb0pzN4LePd3XiA0fTOzYj";
    return [
      ["svix-id", id],
      ["svix-timestamp", String(timestampS)],
      ["svix-signature", wh.sign(id, new Date(timestampS * 1000), c.payload)],
    ];
  };
  const verify = verifierFor(c.provider, c.secret, body);

  describe(`${c.provider} verification`, () => {
    it("accepts a signature made by the standardwebhooks library, under svix- names", () => {
      expect(verify(svixHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
    });

    it("rejects a wrong secret and a changed body", () => {
      const stranger = new Webhook(Buffer.from("a-different-raw-secret-of-24b"), { format: "raw" });
      expect(verdict(verify(svixHeaders(NOW_S, stranger)))).toBe("signature_mismatch");
      const changed = Buffer.from(c.payload.replace(c.eventType, c.otherEventType));
      expect(verdict(verify(svixHeaders(), { body: changed }))).toBe("signature_mismatch");
    });

    it("reports a missing and a malformed signature", () => {
      expect(verdict(verify([]))).toBe("missing_signature");
      const badSignature = svixHeaders().map(([n, v]) => [n, n === "svix-signature" ? "v1,not base64!" : v] as const);
      expect(verdict(verify(badSignature))).toBe("malformed_signature");
      expect(verdict(verify(svixHeaders().filter(([n]) => n !== "svix-timestamp")))).toBe("malformed_signature");
    });

    it("rejects a timestamp 6 minutes old, as Svix's libraries do", () => {
      expect(verdict(verify(svixHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
      expect(verdict(verify(svixHeaders(NOW_S - 300)))).toBe("verified");
    });
  });

  describe(`${c.provider} signing`, () => {
    it("keeps the svix- spelling and message id, and the library accepts it", () => {
      const nowMs = Date.now();
      const signed = signHeaders({ provider: c.provider, secret: Buffer.from(c.secret), body, nowMs, headers: svixHeaders() });
      expect(signed.map(([n]) => n)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
      expect(verdict(verify(signed, { nowMs }))).toBe("verified");
      const asWebhook = Object.fromEntries(signed.map(([n, v]) => [n.replace("svix-", "webhook-"), v]));
      expect(library.verify(c.payload, asWebhook)).toEqual(JSON.parse(c.payload));
      const fresh = signHeaders({ provider: c.provider, secret: Buffer.from(c.secret), body, nowMs: NOW_MS, headers: [] });
      expect(verdict(verify(fresh))).toBe("verified");
    });
  });

  return { body, svixHeaders };
}
