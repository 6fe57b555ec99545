import type { ProviderScheme } from "../scheme.js";
import { standardWebhooks } from "./standard-webhooks.js";

/**
 * Resend delivers through Svix: `svix-id`, `svix-timestamp` and `svix-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the base64 after whsec_),
 * exactly the Standard Webhooks scheme, whose verification and signing this reuses
 * (https://resend.com/docs/webhooks/verify-webhooks-requests). Those headers are every Svix
 * sender's, so Resend cannot be told from its headers: detection is always false and the
 * endpoint names it.
 */
export const resend: ProviderScheme = {
  ...standardWebhooks,
  name: "resend",
  label: "Resend",
  secretFormat: {
    description: "The webhook's Signing Secret (Resend dashboard, Webhooks, the webhook's details), whsec_ followed by base64; not a Resend API key (re_).",
    example: "whsec_…",
  },
  // Svix's message id (svix-id), as Standard Webhooks'.
  deliveryId: standardWebhooks.deliveryId,
  detect: () => false,
};
