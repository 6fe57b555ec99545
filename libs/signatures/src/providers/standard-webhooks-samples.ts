import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

/**
 * The payload shape the Standard Webhooks spec recommends (standardwebhooks.com): `type`,
 * `timestamp` and `data`. The message id rides in webhook-id; signing keeps it.
 */
function message(ctx: SampleContext, type: string, data: JsonValue) {
  return jsonRequest([["webhook-id", ctx.id("msg_", 27)]], { type, timestamp: ctx.iso, data });
}

export const standardWebhooksSamples: ProviderSamples = {
  samples: [
    {
      eventType: "user.created",
      build: (ctx) => message(ctx, "user.created", { id: ctx.id("usr_", 20), email: "jenny.rosen@example.com", name: "Jenny Rosen", created_at: ctx.iso }),
    },
    {
      eventType: "invoice.paid",
      build: (ctx) =>
        message(ctx, "invoice.paid", { id: ctx.id("inv_", 20), customer_id: ctx.id("cus_", 20), amount: 2000, currency: "usd", status: "paid", paid_at: ctx.iso }),
    },
    {
      eventType: "subscription.canceled",
      build: (ctx) =>
        message(ctx, "subscription.canceled", { id: ctx.id("sub_", 20), customer_id: ctx.id("cus_", 20), plan: "pro", status: "canceled", canceled_at: ctx.iso }),
    },
  ],
};
