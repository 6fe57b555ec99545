import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider } from "../index.js";
import { svixSuite } from "../testing/shared-suites.js";

/**
 * Resend delivers through Svix (https://resend.com/docs/webhooks/verify-webhooks-requests), whose scheme is Standard Webhooks under svix- header
 * names: the signatures here are made by the standardwebhooks library (svix needs Node 22).
 */
const { body: BODY, svixHeaders } = svixSuite({
  provider: "resend",
  secret: `whsec_${randomBytes(24).toString("base64")}`,
  payload: '{"type":"email.delivered","created_at":"2026-09-21T13:33:20.000Z","data":{"created_at":"2026-09-21 13:33:19.837+00","email_id":"56761188-7520-42d8-8898-ff6fc54ce618","from":"Acme <onboarding@resend.dev>","to":["delivered@resend.dev"],"subject":"Sending this example"}}',
  eventType: "email.delivered",
  otherEventType: "email.bounced",
});

describe("resend detection and event type", () => {
  it("is never detected: its headers are every Svix sender's, so the endpoint names it", () => {
    expect(detectProvider(svixHeaders())).toBe("standard_webhooks");
  });

  it("is the body's top-level type", () => {
    expect(canonicalEventType("resend", svixHeaders(), BODY)).toBe("email.delivered");
    expect(canonicalEventType("resend", [], Buffer.from('{"data":{"type":"x"}}'))).toBe("");
  });
});
