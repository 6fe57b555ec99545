import { describe, it, expect } from "vitest";
import { isSensitiveHeader } from "@whc/api-model";
import { isMaskedHeader } from "@whc/curl-export";

// The dashboard masks the headers it shows by the cURL export's rule (docs/design.md §3): one
// rule, written once for the gateway and once for the browser, held equal here.
const NAMES = [
  "Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-GitHub-Event", "Content-Type", "Stripe-Signature",
  "X-Hub-Signature-256", "X-Api-Key", "apikey", "X-Auth-Token", "X-Shopify-Hmac-Sha256", "X-Webhook-Secret", "User-Agent",
  "X-Slack-Request-Timestamp", "X-Custom-Sig", "webhook-id",
];

describe("the dashboard's header masking", () => {
  it("masks exactly what the cURL export masks, the endpoint's own signature header included", () => {
    for (const name of NAMES) {
      expect(isSensitiveHeader(name), name).toBe(isMaskedHeader(name));
      expect(isSensitiveHeader(name, ["x-custom-sig"]), name).toBe(isMaskedHeader(name, ["x-custom-sig"]));
    }
    expect(isSensitiveHeader("X-Custom-Sig", ["x-custom-sig"])).toBe(true);
    expect(isSensitiveHeader("X-GitHub-Event")).toBe(false);
  });
});
