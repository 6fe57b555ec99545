import { jsonRequest, type ProviderSamples } from "../sample.js";

/** charge:confirmed (Coinbase Commerce, "Webhooks"): a delivery around the event and its charge. */
export const coinbaseCommerceSamples: ProviderSamples = {
  samples: [
    {
      eventType: "charge:confirmed",
      build: (ctx) => {
        const code = ctx.id("", 8, "upper");
        return jsonRequest([["User-Agent", "weipay-webhooks"]], {
          id: ctx.int(1, 99_999),
          scheduled_for: ctx.iso,
          attempt_number: 1,
          event: {
            id: ctx.uuid(),
            resource: "event",
            type: "charge:confirmed",
            api_version: "2018-03-22",
            created_at: ctx.iso,
            data: {
              id: ctx.uuid(),
              code,
              name: "The Sovereign Individual",
              description: "Mastering the Transition to the Information Age",
              hosted_url: `https://commerce.coinbase.com/charges/${code}`,
              created_at: new Date(ctx.nowMs - 600_000).toISOString(),
              confirmed_at: ctx.iso,
              pricing_type: "fixed_price",
              pricing: { local: { amount: "100.00", currency: "USD" } },
              metadata: { customer_id: "id_1005", customer_name: "Satoshi Nakamoto" },
              timeline: [
                { time: new Date(ctx.nowMs - 600_000).toISOString(), status: "NEW" },
                { time: ctx.iso, status: "COMPLETED" },
              ],
            },
          },
        });
      },
    },
  ],
};
