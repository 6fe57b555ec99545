import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

const API_VERSION = "2024-06-20";

/** Stripe's event envelope (https://docs.stripe.com/api/events/object) around one API object. */
function event(ctx: SampleContext, type: string, object: JsonValue) {
  return jsonRequest([["User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"]], {
    id: ctx.id("evt_", 24),
    object: "event",
    api_version: API_VERSION,
    created: ctx.unix,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: ctx.id("req_", 14), idempotency_key: ctx.uuid() },
    type,
  }, "application/json; charset=utf-8");
}

function invoice(ctx: SampleContext, customer: string, subscription: string) {
  const amount = 2000;
  return {
    id: ctx.id("in_", 24),
    object: "invoice",
    account_country: "US",
    amount_due: amount,
    amount_paid: amount,
    amount_remaining: 0,
    attempt_count: 1,
    attempted: true,
    billing_reason: "subscription_cycle",
    collection_method: "charge_automatically",
    created: ctx.unix - 3600,
    currency: "usd",
    customer,
    customer_email: "jenny.rosen@example.com",
    hosted_invoice_url: `https://invoice.stripe.com/i/acct_${ctx.id("", 16)}`,
    lines: {
      object: "list",
      data: [
        {
          id: ctx.id("il_", 24),
          object: "line_item",
          amount,
          currency: "usd",
          description: "1 × Pro plan (at $20.00 / month)",
          period: { start: ctx.unix - 3600, end: ctx.unix - 3600 + 30 * 86400 },
          quantity: 1,
        },
      ],
      has_more: false,
      total_count: 1,
    },
    livemode: false,
    number: `${ctx.id("", 8, "upper")}-0001`,
    paid: true,
    status: "paid",
    status_transitions: { finalized_at: ctx.unix - 3500, paid_at: ctx.unix },
    subscription,
    subtotal: amount,
    total: amount,
  };
}

export const stripeSamples: ProviderSamples = {
  samples: [
    {
      eventType: "invoice.paid",
      build: (ctx) => event(ctx, "invoice.paid", invoice(ctx, ctx.id("cus_", 14), ctx.id("sub_", 24))),
    },
    {
      eventType: "payment_intent.succeeded",
      build: (ctx) =>
        event(ctx, "payment_intent.succeeded", {
          id: ctx.id("pi_", 24),
          object: "payment_intent",
          amount: 4999,
          amount_received: 4999,
          capture_method: "automatic",
          client_secret: null,
          confirmation_method: "automatic",
          created: ctx.unix - 5,
          currency: "usd",
          customer: ctx.id("cus_", 14),
          description: "Order #1042",
          latest_charge: ctx.id("ch_", 24),
          livemode: false,
          metadata: { order_id: "1042" },
          payment_method: ctx.id("pm_", 24),
          payment_method_types: ["card"],
          receipt_email: "jenny.rosen@example.com",
          status: "succeeded",
        }),
    },
    {
      eventType: "customer.subscription.created",
      build: (ctx) =>
        event(ctx, "customer.subscription.created", {
          id: ctx.id("sub_", 24),
          object: "subscription",
          billing_cycle_anchor: ctx.unix,
          cancel_at_period_end: false,
          collection_method: "charge_automatically",
          created: ctx.unix,
          currency: "usd",
          current_period_end: ctx.unix + 30 * 86400,
          current_period_start: ctx.unix,
          customer: ctx.id("cus_", 14),
          items: {
            object: "list",
            data: [
              {
                id: ctx.id("si_", 14),
                object: "subscription_item",
                price: { id: ctx.id("price_", 24), object: "price", currency: "usd", unit_amount: 2000, recurring: { interval: "month", interval_count: 1 } },
                quantity: 1,
              },
            ],
            has_more: false,
            total_count: 1,
          },
          latest_invoice: ctx.id("in_", 24),
          livemode: false,
          metadata: {},
          status: "active",
        }),
    },
    {
      eventType: "checkout.session.completed",
      build: (ctx) =>
        event(ctx, "checkout.session.completed", {
          id: ctx.id("cs_test_", 58),
          object: "checkout.session",
          amount_subtotal: 4999,
          amount_total: 4999,
          cancel_url: "https://example.com/cart",
          created: ctx.unix - 60,
          currency: "usd",
          customer: ctx.id("cus_", 14),
          customer_details: { email: "jenny.rosen@example.com", name: "Jenny Rosen", address: { country: "US", postal_code: "94103" } },
          expires_at: ctx.unix + 86340,
          livemode: false,
          mode: "payment",
          payment_intent: ctx.id("pi_", 24),
          payment_status: "paid",
          status: "complete",
          success_url: "https://example.com/thanks",
        }),
    },
  ],
};
