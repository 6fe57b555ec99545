import { jsonRequest, type ProviderSamples } from "../sample.js";

const SOURCE = "https://shop.example.com/";

/** order.created (woocommerce.github.io/woocommerce-rest-api-docs, "Webhooks"): the order as the REST API shows it. */
export const woocommerceSamples: ProviderSamples = {
  samples: [
    {
      eventType: "order.created",
      build: (ctx) => {
        const id = ctx.int(100, 99_999);
        const local = ctx.iso.replace(/\.\d+Z$/, "");
        return jsonRequest(
          [
            ["User-Agent", "WooCommerce/9.1.2 Hookshot (WordPress/6.6.1)"],
            ["X-WC-Webhook-Source", SOURCE],
            ["X-WC-Webhook-Topic", "order.created"],
            ["X-WC-Webhook-Resource", "order"],
            ["X-WC-Webhook-Event", "created"],
            ["X-WC-Webhook-ID", "12"],
            ["X-WC-Webhook-Delivery-ID", ctx.id("", 32, "hex")],
          ],
          {
            id,
            status: "processing",
            currency: "USD",
            date_created: local,
            date_created_gmt: local,
            total: "29.35",
            total_tax: "1.35",
            customer_id: 0,
            order_key: ctx.id("wc_order_", 13),
            billing: { first_name: "John", last_name: "Doe", address_1: "969 Market", city: "San Francisco", state: "CA", postcode: "94103", country: "US", email: "john.doe@example.com", phone: "(555) 555-5555" },
            payment_method: "bacs",
            payment_method_title: "Direct Bank Transfer",
            line_items: [{ id: ctx.int(1, 9999), name: "Woo Single #1", product_id: 93, variation_id: 0, quantity: 2, subtotal: "6.00", total: "6.00", sku: "", price: 3 }],
          },
        );
      },
    },
  ],
};
