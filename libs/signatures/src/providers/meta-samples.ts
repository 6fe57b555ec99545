import { jsonRequest, type ProviderSamples } from "../sample.js";

/** A WhatsApp Business message notification (developers.facebook.com, Graph API webhooks): `object` names the product. */
export const metaSamples: ProviderSamples = {
  samples: [
    {
      eventType: "whatsapp_business_account",
      build: (ctx) =>
        jsonRequest([["User-Agent", "facebookexternalua"]], {
          object: "whatsapp_business_account",
          entry: [
            {
              id: "102290129340398",
              changes: [
                {
                  field: "messages",
                  value: {
                    messaging_product: "whatsapp",
                    metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" },
                    contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }],
                    messages: [{ from: "16505551234", id: `wamid.${ctx.id("", 48)}`, timestamp: String(ctx.unix), type: "text", text: { body: "Where is my order?" } }],
                  },
                },
              ],
            },
          ],
        }),
    },
    {
      eventType: "page",
      build: (ctx) =>
        jsonRequest([["User-Agent", "facebookexternalua"]], {
          object: "page",
          entry: [{ id: "109876543210987", time: ctx.nowMs, changes: [{ field: "feed", value: { item: "comment", verb: "add", post_id: "109876543210987_123456789", comment_id: ctx.id("", 15, "digits"), message: "Love it!", created_time: ctx.unix, from: { id: "4567890123", name: "Jenny Rosen" } } }] }],
        }),
    },
  ],
};
