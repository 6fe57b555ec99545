import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

const SHOP = "example-store.myshopify.com";

/** The headers Shopify sends with every webhook (shopify.dev, "Deliver webhooks through HTTPS"). */
function webhook(ctx: SampleContext, topic: string, payload: JsonValue) {
  return jsonRequest(
    [
      ["User-Agent", "Shopify-Captain-Hook"],
      ["X-Shopify-Topic", topic],
      ["X-Shopify-Shop-Domain", SHOP],
      ["X-Shopify-API-Version", "2024-07"],
      ["X-Shopify-Webhook-Id", ctx.uuid()],
      ["X-Shopify-Event-Id", ctx.uuid()],
      ["X-Shopify-Triggered-At", ctx.iso],
    ],
    payload,
  );
}

const gid = (ctx: SampleContext) => ctx.int(1_000_000_000, 9_999_999_999) * 1000;

const customer = (ctx: SampleContext, id = gid(ctx)) => ({
  id,
  email: "bob.norman@example.com",
  first_name: "Bob",
  last_name: "Norman",
  phone: "+16135551111",
  state: "enabled",
  verified_email: true,
  currency: "USD",
  created_at: ctx.iso,
  updated_at: ctx.iso,
  admin_graphql_api_id: `gid://shopify/Customer/${id}`,
});

export const shopifySamples: ProviderSamples = {
  samples: [
    {
      eventType: "orders/create",
      build: (ctx) => {
        const id = gid(ctx);
        const number = ctx.int(1001, 9999);
        return webhook(ctx, "orders/create", {
          id,
          admin_graphql_api_id: `gid://shopify/Order/${id}`,
          name: `#${number}`,
          order_number: number,
          email: "bob.norman@example.com",
          created_at: ctx.iso,
          updated_at: ctx.iso,
          currency: "USD",
          financial_status: "paid",
          fulfillment_status: null,
          subtotal_price: "199.00",
          total_tax: "0.00",
          total_price: "199.00",
          total_discounts: "0.00",
          test: true,
          line_items: [
            { id: gid(ctx), product_id: gid(ctx), variant_id: gid(ctx), title: "IPod Nano - 8GB", quantity: 1, price: "199.00", sku: "IPOD2008PINK", requires_shipping: true },
          ],
          shipping_address: { first_name: "Bob", last_name: "Norman", address1: "Chestnut Street 92", city: "Louisville", province_code: "KY", country_code: "US", zip: "40202" },
          customer: customer(ctx),
        });
      },
    },
    {
      eventType: "products/update",
      build: (ctx) => {
        const id = gid(ctx);
        return webhook(ctx, "products/update", {
          id,
          admin_graphql_api_id: `gid://shopify/Product/${id}`,
          title: "IPod Nano - 8GB",
          body_html: "<p>It's the small iPod with a big idea.</p>",
          vendor: "Apple",
          product_type: "Cult Products",
          handle: "ipod-nano",
          status: "active",
          tags: "Emotive, Flash Memory, MP3",
          created_at: ctx.iso,
          updated_at: ctx.iso,
          variants: [{ id: gid(ctx), product_id: id, title: "Pink", price: "199.00", sku: "IPOD2008PINK", inventory_quantity: 10 }],
        });
      },
    },
    { eventType: "customers/create", build: (ctx) => webhook(ctx, "customers/create", customer(ctx)) },
    {
      eventType: "app/uninstalled",
      build: (ctx) =>
        webhook(ctx, "app/uninstalled", {
          id: ctx.int(10_000_000, 99_999_999),
          name: "Example Store",
          email: "owner@example.com",
          domain: "example.com",
          myshopify_domain: SHOP,
          plan_name: "basic",
          currency: "USD",
          created_at: ctx.iso,
        }),
    },
  ],
};
