import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

/** Paddle Billing's notification envelope (developer.paddle.com/webhooks): ids are a prefix and 26 lower-case characters. */
function notification(ctx: SampleContext, eventType: string, data: JsonValue) {
  return jsonRequest([["User-Agent", "Paddle"]], {
    event_id: ctx.id("evt_", 26, "lower"),
    event_type: eventType,
    occurred_at: ctx.iso,
    notification_id: ctx.id("ntf_", 26, "lower"),
    data,
  });
}

const pid = (ctx: SampleContext, prefix: string) => ctx.id(prefix, 26, "lower");

const items = (ctx: SampleContext) => [
  {
    price: {
      id: pid(ctx, "pri_"),
      product_id: pid(ctx, "pro_"),
      description: "Monthly",
      name: "Pro plan",
      billing_cycle: { interval: "month", frequency: 1 },
      unit_price: { amount: "3000", currency_code: "USD" },
      status: "active",
    },
    quantity: 1,
  },
];

function subscription(ctx: SampleContext, status: string) {
  const start = ctx.iso;
  const end = new Date(ctx.nowMs + 30 * 86_400_000).toISOString();
  return {
    id: pid(ctx, "sub_"),
    status,
    customer_id: pid(ctx, "ctm_"),
    address_id: pid(ctx, "add_"),
    business_id: null,
    currency_code: "USD",
    created_at: start,
    updated_at: start,
    started_at: start,
    first_billed_at: start,
    next_billed_at: status === "canceled" ? null : end,
    canceled_at: status === "canceled" ? start : null,
    collection_mode: "automatic",
    billing_cycle: { interval: "month", frequency: 1 },
    current_billing_period: status === "canceled" ? null : { starts_at: start, ends_at: end },
    scheduled_change: null,
    items: items(ctx),
    custom_data: null,
  };
}

export const paddleSamples: ProviderSamples = {
  samples: [
    {
      eventType: "transaction.completed",
      build: (ctx) =>
        notification(ctx, "transaction.completed", {
          id: pid(ctx, "txn_"),
          status: "completed",
          customer_id: pid(ctx, "ctm_"),
          address_id: pid(ctx, "add_"),
          business_id: null,
          custom_data: null,
          currency_code: "USD",
          origin: "web",
          subscription_id: pid(ctx, "sub_"),
          invoice_id: pid(ctx, "inv_"),
          invoice_number: `325-${ctx.int(10000, 99999)}`,
          collection_mode: "automatic",
          billing_period: { starts_at: ctx.iso, ends_at: new Date(ctx.nowMs + 30 * 86_400_000).toISOString() },
          items: items(ctx).map((item) => ({ price_id: item.price.id, price: item.price, quantity: 1 })),
          details: { totals: { subtotal: "3000", tax: "0", discount: "0", total: "3000", grand_total: "3000", currency_code: "USD" } },
          payments: [{ payment_attempt_id: ctx.uuid(), amount: "3000", status: "captured", method_details: { type: "card", card: { type: "visa", last4: "4242" } } }],
          created_at: ctx.iso,
          updated_at: ctx.iso,
          billed_at: ctx.iso,
        }),
    },
    { eventType: "subscription.created", build: (ctx) => notification(ctx, "subscription.created", subscription(ctx, "active")) },
    { eventType: "subscription.canceled", build: (ctx) => notification(ctx, "subscription.canceled", subscription(ctx, "canceled")) },
    {
      eventType: "customer.created",
      build: (ctx) =>
        notification(ctx, "customer.created", {
          id: pid(ctx, "ctm_"),
          name: "Sam Miller",
          email: "sam@example.com",
          locale: "en",
          status: "active",
          marketing_consent: false,
          custom_data: null,
          created_at: ctx.iso,
          updated_at: ctx.iso,
        }),
    },
  ],
};
