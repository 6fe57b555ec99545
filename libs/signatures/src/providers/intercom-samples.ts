import { jsonRequest, type ProviderSamples } from "../sample.js";

/** A notification_event (developers.intercom.com, "Webhook models"): the topic names the event. */
export const intercomSamples: ProviderSamples = {
  samples: [
    {
      eventType: "conversation.user.created",
      build: (ctx) =>
        jsonRequest([["User-Agent", "intercom-parrot-service-client/1.0"]], {
          type: "notification_event",
          app_id: "abc12def",
          id: ctx.id("notif_", 36, "hex"),
          topic: "conversation.user.created",
          delivery_status: "pending",
          delivery_attempts: 1,
          delivered_at: 0,
          first_sent_at: ctx.unix,
          created_at: ctx.unix,
          self: null,
          data: {
            type: "notification_event_data",
            item: {
              type: "conversation",
              id: String(ctx.int(100_000_000, 999_999_999)),
              created_at: ctx.unix,
              updated_at: ctx.unix,
              source: { type: "conversation", id: String(ctx.int(100_000_000, 999_999_999)), delivered_as: "customer_initiated", body: "<p>Hi, my invoice looks wrong.</p>", author: { type: "user", id: ctx.id("", 24, "hex"), name: "Jenny Rosen", email: "jenny.rosen@example.com" } },
              open: true,
              state: "open",
              read: false,
            },
          },
        }),
    },
  ],
};
