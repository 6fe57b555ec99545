import { describe, expect, it } from "vitest";
import { detectProvider, type HeaderPair, type Provider } from "./index.js";

describe("detectProvider", () => {
  it.each<[string, HeaderPair[], Provider | undefined]>([
    ["Stripe-Signature", [["Stripe-Signature", "t=1,v1=00"]], "stripe"],
    ["X-GitHub-Event", [["X-GitHub-Event", "push"]], "github"],
    ["X-Hub-Signature-256", [["X-Hub-Signature-256", "sha256=00"]], "github"],
    ["X-Slack-Signature", [["X-Slack-Signature", "v0=00"]], "slack"],
    ["X-Slack-Request-Timestamp", [["X-Slack-Request-Timestamp", "1"]], "slack"],
    ["X-Shopify-Hmac-Sha256", [["X-Shopify-Hmac-Sha256", "AA=="]], "shopify"],
    ["X-Shopify-Topic", [["X-Shopify-Topic", "orders/create"]], "shopify"],
    ["webhook-signature", [["webhook-signature", "v1,AA=="]], "standard_webhooks"],
    ["webhook-id", [["webhook-id", "msg_1"]], "standard_webhooks"],
    ["svix-signature", [["svix-signature", "v1,AA=="]], "standard_webhooks"],
    ["svix-id", [["svix-id", "msg_1"]], "standard_webhooks"],
    ["names in other cases", [["STRIPE-SIGNATURE", "x"]], "stripe"],
    ["lower-case GitHub", [["x-github-event", "ping"]], "github"],
    ["nothing identifying", [["Content-Type", "application/json"], ["User-Agent", "curl/8"], ["X-Signature", "00"]], undefined],
    ["no headers", [], undefined],
    ["only the SHA-1 hub signature", [["X-Hub-Signature", "sha1=00"]], undefined],
  ])("%s", (_, headers, expected) => {
    expect(detectProvider(headers)).toBe(expected);
  });

  it("finds the provider's header among others, in any position", () => {
    expect(detectProvider([["Accept", "*/*"], ["Content-Type", "application/json"], ["x-shopify-topic", "orders/paid"]])).toBe("shopify");
  });
});
