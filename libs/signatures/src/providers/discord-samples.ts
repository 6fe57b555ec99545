import { jsonRequest, type ProviderSamples } from "../sample.js";

const APPLICATION = "1234567765431878704";

/**
 * A webhook event (discord.com/developers/docs/events/webhook-events): type 1 with the event in
 * `event`. Signing needs the app's Ed25519 private key, which only the app's owner has.
 */
export const discordSamples: ProviderSamples = {
  samples: [
    {
      eventType: "APPLICATION_AUTHORIZED",
      build: (ctx) =>
        jsonRequest([["User-Agent", "Discord-Webhook/1.0 (https://discord.com)"]], {
          version: 1,
          application_id: APPLICATION,
          type: 1,
          event: {
            type: "APPLICATION_AUTHORIZED",
            timestamp: ctx.iso,
            data: {
              integration_type: 0,
              scopes: ["applications.commands"],
              user: { id: ctx.id("", 18, "digits"), username: "nelly", global_name: "Nelly", avatar: null, discriminator: "0" },
              guild: { id: ctx.id("", 18, "digits"), name: "Billing team" },
            },
          },
        }),
    },
  ],
};
