import { jsonRequest, type ProviderSamples } from "../sample.js";

/** order_created (docs.lemonsqueezy.com, "Webhook requests"): meta names the event, data is a JSON:API resource. */
export const lemonSqueezySamples: ProviderSamples = {
  samples: [
    {
      eventType: "order_created",
      build: (ctx) => {
        const id = String(ctx.int(100_000, 9_999_999));
        return jsonRequest([["User-Agent", "LemonSqueezy-Hookshot"], ["X-Event-Name", "order_created"]], {
          meta: { event_name: "order_created", custom_data: { customer_id: 25 }, test_mode: true },
          data: {
            type: "orders",
            id,
            attributes: {
              store_id: 1,
              customer_id: 1,
              identifier: ctx.uuid(),
              order_number: ctx.int(1, 99_999),
              user_name: "Darlene Daugherty",
              user_email: "gernser@example.net",
              currency: "USD",
              subtotal: 999,
              tax: 200,
              total: 1199,
              status: "paid",
              status_formatted: "Paid",
              refunded: false,
              first_order_item: { id: ctx.int(1, 99_999), order_id: Number(id), product_id: 1, variant_id: 1, product_name: "Test Limited License for 2 years", variant_name: "Default", price: 1199 },
              created_at: ctx.iso,
              updated_at: ctx.iso,
              test_mode: true,
            },
            links: { self: `https://api.lemonsqueezy.com/v1/orders/${id}` },
          },
        });
      },
    },
  ],
};
