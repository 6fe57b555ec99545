import { jsonRequest, type ProviderSamples } from "../sample.js";

/** user.created as Clerk delivers it through Svix (clerk.com/docs/webhooks): svix-id names the message. */
export const clerkSamples: ProviderSamples = {
  samples: [
    {
      eventType: "user.created",
      build: (ctx) => {
        const email = ctx.id("idn_", 27);
        return jsonRequest([["User-Agent", "Svix-Webhooks/1.24.0"], ["svix-id", ctx.id("msg_", 27)]], {
          data: {
            id: ctx.id("user_", 27),
            object: "user",
            first_name: "Example",
            last_name: "Example",
            email_addresses: [{ id: email, object: "email_address", email_address: "example@example.org", verification: { status: "verified", strategy: "ticket" }, linked_to: [] }],
            primary_email_address_id: email,
            image_url: "https://img.clerk.com/xxxxxx",
            created_at: ctx.nowMs,
            updated_at: ctx.nowMs,
            public_metadata: {},
            external_accounts: [],
            two_factor_enabled: false,
          },
          event_attributes: { http_request: { client_ip: "0.0.0.0", user_agent: "Mozilla/5.0" } },
          instance_id: ctx.id("ins_", 27),
          object: "event",
          timestamp: ctx.nowMs,
          type: "user.created",
        });
      },
    },
  ],
};
