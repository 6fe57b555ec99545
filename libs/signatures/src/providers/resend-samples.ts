import { jsonRequest, type ProviderSamples } from "../sample.js";

/** email.delivered (resend.com/docs/dashboard/webhooks/event-types), delivered through Svix. */
export const resendSamples: ProviderSamples = {
  samples: [
    {
      eventType: "email.delivered",
      build: (ctx) =>
        jsonRequest([["User-Agent", "Svix-Webhooks/1.24.0"], ["svix-id", ctx.id("msg_", 27)]], {
          type: "email.delivered",
          created_at: ctx.iso,
          data: {
            email_id: ctx.uuid(),
            from: "Acme <onboarding@resend.dev>",
            to: ["delivered@resend.dev"],
            subject: "Your invoice is ready",
            created_at: new Date(ctx.nowMs - 2000).toISOString(),
          },
        }),
    },
  ],
};
