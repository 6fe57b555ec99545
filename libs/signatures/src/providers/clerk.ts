import type { ProviderScheme } from "../scheme.js";
import { standardWebhooks } from "./standard-webhooks.js";

/**
 * Clerk delivers through Svix: `svix-id`, `svix-timestamp` and `svix-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the base64 after whsec_),
 * exactly the Standard Webhooks scheme, whose verification and signing this reuses
 * (https://clerk.com/docs/webhooks/overview). Those headers are every Svix sender's, so Clerk
 * cannot be told from its headers: detection is always false and the endpoint names it.
 */
export const clerk: ProviderScheme = {
  ...standardWebhooks,
  name: "clerk",
  label: "Clerk",
  secretFormat: {
    description: "The endpoint's Signing Secret (Clerk Dashboard, Configure, Webhooks, the endpoint), whsec_ followed by base64; not a Clerk API key (sk_).",
    example: "whsec_…",
  },
  // Svix's message id (svix-id), as Standard Webhooks'.
  deliveryId: standardWebhooks.deliveryId,
  detect: () => false,
};
