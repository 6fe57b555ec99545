import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

const MERCHANT = "6SSW7HV8K2ST5";
const LOCATION = "L8P6CCZBCXZRT";

/** Square's event (developer.squareup.com/reference/square/webhooks): data.object keyed by the entity's type. */
function notification(ctx: SampleContext, type: string, entity: string, id: string, object: JsonValue) {
  return jsonRequest(
    [
      ["User-Agent", "Square Connect v2"],
      ["Square-Initial-Delivery-Timestamp", ctx.iso],
      ["Square-Retry-Number", "0"],
    ],
    { merchant_id: MERCHANT, type, event_id: ctx.uuid(), created_at: ctx.iso, data: { type: entity, id, object: { [entity]: object } } },
  );
}

const sq = (ctx: SampleContext) => ctx.id("", 29);
const money = (amount: number) => ({ amount, currency: "USD" });

function payment(ctx: SampleContext, status: string) {
  const id = sq(ctx);
  return {
    id,
    object: {
      id,
      created_at: ctx.iso,
      updated_at: ctx.iso,
      amount_money: money(1500),
      total_money: money(1500),
      approved_money: money(1500),
      status,
      source_type: "CARD",
      card_details: { status: status === "COMPLETED" ? "CAPTURED" : "AUTHORIZED", card: { card_brand: "VISA", last_4: "1111", exp_month: 11, exp_year: 2030 }, entry_method: "KEYED" },
      location_id: LOCATION,
      order_id: sq(ctx),
      receipt_number: id.slice(0, 4),
      version_token: ctx.id("", 42),
    },
  };
}

export const squareSamples: ProviderSamples = {
  samples: [
    {
      eventType: "payment.created",
      build: (ctx) => {
        const p = payment(ctx, "APPROVED");
        return notification(ctx, "payment.created", "payment", p.id, { ...p.object, version: 0 });
      },
    },
    {
      eventType: "payment.updated",
      build: (ctx) => {
        const p = payment(ctx, "COMPLETED");
        return notification(ctx, "payment.updated", "payment", p.id, { ...p.object, version: 1 });
      },
    },
    {
      eventType: "order.created",
      build: (ctx) => {
        const id = sq(ctx);
        return notification(ctx, "order.created", "order_created", id, { order_id: id, version: 1, location_id: LOCATION, state: "OPEN", created_at: ctx.iso });
      },
    },
    {
      eventType: "customer.created",
      build: (ctx) => {
        const id = ctx.id("", 26, "upper");
        return notification(ctx, "customer.created", "customer", id, {
          id,
          created_at: ctx.iso,
          updated_at: ctx.iso,
          given_name: "Amelia",
          family_name: "Earhart",
          email_address: "amelia.earhart@example.com",
          phone_number: "+1-212-555-4240",
          creation_source: "THIRD_PARTY",
          preferences: { email_unsubscribed: false },
          version: 0,
        });
      },
    },
  ],
};
