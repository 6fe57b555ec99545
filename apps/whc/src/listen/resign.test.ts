import { describe, it, expect } from "vitest";
import { needsResign, signatureAge, withSignature } from "./resign.js";
import type { LocalRequest } from "./local-request.js";

const NOW = Date.parse("2026-11-26T10:00:00.000Z");
const captured = (agoS: number, signature: Record<string, unknown> | undefined) => ({
  receivedAt: new Date(NOW - agoS * 1000).toISOString(),
  diagnostic: signature ? { signature } : {},
});

describe("when whc listen re-signs", () => {
  it("reads the signature's age from the skew at capture plus the time since, and the provider's tolerance", () => {
    expect(signatureAge(captured(60, { toleranceSeconds: 300, skewSeconds: 10 }), NOW)).toEqual({ toleranceS: 300, ageS: 70 });
    expect(signatureAge(captured(60, { toleranceSeconds: 300 }), NOW)).toEqual({ toleranceS: 300, ageS: 60 });
    // GitHub, Shopify...: no timestamp, never stale.
    expect(signatureAge(captured(86_400, { provider: "github" }), NOW)).toBeUndefined();
    expect(signatureAge(captured(86_400, undefined), NOW)).toBeUndefined();
  });

  it("stale: past the tolerance less a margin for the trip; always: every event; never: none", () => {
    const stripe = (agoS: number, skewS = 0) => captured(agoS, { toleranceSeconds: 300, skewSeconds: skewS });
    expect(needsResign("stale", stripe(60), NOW)).toBe(false);
    expect(needsResign("stale", stripe(269), NOW)).toBe(false);
    expect(needsResign("stale", stripe(271), NOW)).toBe(true);
    expect(needsResign("stale", stripe(0, 600), NOW)).toBe(true);
    expect(needsResign("stale", captured(600, { toleranceSeconds: 20 }), NOW)).toBe(true);
    expect(needsResign("stale", captured(14, { toleranceSeconds: 20 }), NOW)).toBe(false);
    expect(needsResign("stale", captured(86_400, {}), NOW)).toBe(false);
    expect(needsResign("always", stripe(0), NOW)).toBe(true);
    expect(needsResign("never", stripe(600), NOW)).toBe(false);
  });

  it("replaces the captured signature headers in place, dropping every one the answer names", () => {
    const req: LocalRequest = {
      origin: new URL("http://localhost:3000"),
      path: "/",
      method: "POST",
      headers: [
        ["Content-Type", "application/json"],
        ["svix-id", "msg_1"],
        ["svix-signature", "v1,stale"],
        ["webhook-signature", "v1,stale"],
        ["User-Agent", "Svix"],
        ["X-Whc-Delivery-Id", "e"],
        ["X-Whc-Attempt", "1"],
      ],
      body: new Uint8Array(),
    };
    const signed = withSignature(req, {
      headers: { "svix-signature": "v1,fresh", "svix-timestamp": "1795000000" },
      replaces: ["svix-signature", "svix-timestamp", "webhook-signature", "webhook-timestamp"],
      provider: "standard_webhooks",
      signedAt: "2026-11-26T10:00:00.000Z",
    });
    expect(signed.headers).toEqual([
      ["Content-Type", "application/json"],
      ["svix-id", "msg_1"],
      ["svix-signature", "v1,fresh"],
      ["svix-timestamp", "1795000000"],
      ["User-Agent", "Svix"],
      ["X-Whc-Delivery-Id", "e"],
      ["X-Whc-Attempt", "1"],
    ]);
    const none = withSignature({ ...req, headers: [["Content-Type", "text/plain"], ["X-Whc-Attempt", "1"]] }, { headers: { "X-Signature": "abc" }, replaces: ["x-signature"], provider: "generic", signedAt: "" });
    expect(none.headers).toEqual([["Content-Type", "text/plain"], ["X-Signature", "abc"], ["X-Whc-Attempt", "1"]]);
  });
});
