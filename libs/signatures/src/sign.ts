import { randomBytes } from "node:crypto";
import { header, has, type HeaderPair } from "./headers.js";
import { hmac } from "./hmac.js";
import type { Provider, SignInput } from "./types.js";
import { DEFAULT_GENERIC_HEADER, standardWebhooksKey } from "./verify.js";

/** The headers a re-signed replay sets, exactly as the provider would send them, with a fresh timestamp. */
export function signHeaders(input: SignInput): HeaderPair[] {
  const t = Math.floor(input.nowMs / 1000);
  const { secret, body } = input;
  switch (input.provider) {
    case "stripe":
      return [["Stripe-Signature", `t=${t},v1=${hmac("sha256", secret, `${t}.`, body).toString("hex")}`]];
    case "github":
      return [
        ["X-Hub-Signature-256", `sha256=${hmac("sha256", secret, body).toString("hex")}`],
        ["X-Hub-Signature", `sha1=${hmac("sha1", secret, body).toString("hex")}`],
      ];
    case "slack":
      return [
        ["X-Slack-Request-Timestamp", String(t)],
        ["X-Slack-Signature", `v0=${hmac("sha256", secret, `v0:${t}:`, body).toString("hex")}`],
      ];
    case "shopify":
      return [["X-Shopify-Hmac-Sha256", hmac("sha256", secret, body).toString("base64")]];
    case "standard_webhooks": {
      const family = has(input.headers, "svix-signature", "svix-id") && !has(input.headers, "webhook-signature") ? "svix" : "webhook";
      const id = header(input.headers, `${family}-id`) ?? `msg_${randomBytes(16).toString("hex")}`;
      const sig = hmac("sha256", standardWebhooksKey(secret), `${id}.${t}.`, body).toString("base64");
      return [
        [`${family}-id`, id],
        [`${family}-timestamp`, String(t)],
        [`${family}-signature`, `v1,${sig}`],
      ];
    }
    case "generic":
      return [
        [
          input.genericSignatureHeader || DEFAULT_GENERIC_HEADER,
          `${input.genericSignaturePrefix ?? ""}${hmac("sha256", secret, body).toString("hex")}`,
        ],
      ];
  }
}

/** Lower-case names of the original's signature headers, which a re-signed replay drops. */
export function signatureHeaderNames(provider: Provider, genericSignatureHeader?: string): string[] {
  switch (provider) {
    case "stripe":
      return ["stripe-signature"];
    case "github":
      return ["x-hub-signature-256", "x-hub-signature"];
    case "slack":
      return ["x-slack-signature", "x-slack-request-timestamp"];
    case "shopify":
      return ["x-shopify-hmac-sha256"];
    case "standard_webhooks":
      return ["webhook-id", "webhook-timestamp", "webhook-signature", "svix-id", "svix-timestamp", "svix-signature"];
    case "generic":
      return [(genericSignatureHeader || DEFAULT_GENERIC_HEADER).toLowerCase()];
  }
}
