import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider } from "../index.js";
import { svixSuite } from "../testing/shared-suites.js";

/**
 * Clerk delivers through Svix (https://clerk.com/docs/webhooks/overview), whose scheme is Standard Webhooks under svix- header
 * names: the signatures here are made by the standardwebhooks library (svix needs Node 22).
 */
const { body: BODY, svixHeaders } = svixSuite({
  provider: "clerk",
  secret: `whsec_${randomBytes(24).toString("base64")}`,
  payload: '{"data":{"id":"user_29w83sxmDNGwOuEthce5gg56FcC","object":"user","first_name":"Example","email_addresses":[{"email_address":"example@example.org","id":"idn_29w83yL7CwVlJXylYLxcslromF1"}]},"event_attributes":{"http_request":{"client_ip":"0.0.0.0","user_agent":"Mozilla/5.0"}},"object":"event","timestamp":1654012591835,"type":"user.created"}',
  eventType: "user.created",
  otherEventType: "session.ended",
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
