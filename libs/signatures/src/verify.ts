import { verifyGeneric } from "./generic.js";
import { verifyGitHub } from "./github.js";
import { verifyShopify } from "./shopify.js";
import { verifySlack } from "./slack.js";
import { verifyStandardWebhooks } from "./standard-webhooks.js";
import { verifyStripe } from "./stripe.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

/** Verifies a capture with its provider's own published scheme; never throws on bad input. */
export function verifySignature(input: VerifyInput): VerifyOutcome {
  switch (input.provider) {
    case "stripe":
      return verifyStripe(input);
    case "github":
      return verifyGitHub(input);
    case "slack":
      return verifySlack(input);
    case "shopify":
      return verifyShopify(input);
    case "standard_webhooks":
      return verifyStandardWebhooks(input);
    case "generic":
      return verifyGeneric(input);
  }
}
