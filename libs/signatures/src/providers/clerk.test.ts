import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, TIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Clerk delivers through Svix (https://clerk.com/docs/webhooks/overview), whose scheme is Standard Webhooks under svix- header
 * names: the signatures here are made by the standardwebhooks library (svix needs Node 22).
 */
const SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const PAYLOAD = '{"data":{"id":"user_29w83sxmDNGwOuEthce5gg56FcC","object":"user","first_name":"Example","email_addresses":[{"email_address":"example@example.org","id":"idn_29w83yL7CwVlJXylYLxcslromF1"}]},"event_attributes":{"http_request":{"client_ip":"0.0.0.0","user_agent":"Mozilla/5.0"}},"object":"event","timestamp":1654012591835,"type":"user.created"}';
const BODY = Buffer.from(PAYLOAD, "utf8");
const library = new Webhook(SECRET);

function svixHeaders(timestampS = NOW_S, wh = library): HeaderPair[] {
  const id = "msg_2Lh9KRb0pzN4LePd3XiA0fTOzYj";
  return [
    ["svix-id", id],
    ["svix-timestamp", String(timestampS)],
    ["svix-signature", wh.sign(id, new Date(timestampS * 1000), PAYLOAD)],
  ];
}

const verify = verifierFor("clerk", SECRET, BODY);

describe("clerk verification", () => {
  it("accepts a signature made by the standardwebhooks library, under svix- names", () => {
    expect(verify(svixHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(svixHeaders(NOW_S, new Webhook(randomBytes(24), { format: "raw" }))))).toBe("signature_mismatch");
    expect(verdict(verify(svixHeaders(), { body: Buffer.from(PAYLOAD.replace("user.created", "session.ended")) }))).toBe("signature_mismatch");
  });

  it("reports a missing and a malformed signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(svixHeaders().map(([n, v]) => [n, n === "svix-signature" ? "v1,not base64!" : v] as const)))).toBe("malformed_signature");
    expect(verdict(verify(svixHeaders().filter(([n]) => n !== "svix-timestamp")))).toBe("malformed_signature");
  });

  it("rejects a timestamp 6 minutes old, as Svix's libraries do", () => {
    expect(verdict(verify(svixHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(svixHeaders(NOW_S - 300)))).toBe("verified");
  });
});

describe("clerk signing", () => {
  it("keeps the svix- spelling and message id, and the library accepts it", () => {
    const nowMs = Date.now();
    const signed = signHeaders({ provider: "clerk", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: svixHeaders() });
    expect(signed.map(([n]) => n)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(verdict(verify(signed, { nowMs }))).toBe("verified");
    const asWebhook = Object.fromEntries(signed.map(([n, v]) => [n.replace("svix-", "webhook-"), v]));
    expect(library.verify(PAYLOAD, asWebhook)).toEqual(JSON.parse(PAYLOAD));
    expect(verdict(verify(signHeaders({ provider: "clerk", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] })))).toBe("verified");
  });
});

describe("clerk detection and event type", () => {
  it("is never detected: its headers are every Svix sender's, so the endpoint names it", () => {
    expect(detectProvider(svixHeaders())).toBe("standard_webhooks");
  });

  it("is the body's top-level type", () => {
    expect(canonicalEventType("clerk", svixHeaders(), BODY)).toBe("user.created");
    expect(canonicalEventType("clerk", [], Buffer.from('{"data":{"type":"x"}}'))).toBe("");
  });
});
