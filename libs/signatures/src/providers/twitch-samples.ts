import { jsonRequest, type ProviderSamples } from "../sample.js";

/**
 * A channel.follow notification (dev.twitch.tv/docs/eventsub/handling-webhook-events): the
 * subscription and the event; the message id and timestamp headers come with the signature.
 */
export const twitchSamples: ProviderSamples = {
  samples: [
    {
      eventType: "channel.follow",
      build: (ctx) => {
        const subscription = ctx.uuid();
        return jsonRequest(
          [
            ["User-Agent", "Twitch-Eventsub-Webhooks/1.0"],
            ["Twitch-Eventsub-Message-Id", ctx.uuid()],
            ["Twitch-Eventsub-Message-Retry", "0"],
            ["Twitch-Eventsub-Message-Type", "notification"],
            ["Twitch-Eventsub-Subscription-Type", "channel.follow"],
            ["Twitch-Eventsub-Subscription-Version", "2"],
          ],
          {
            subscription: {
              id: subscription,
              status: "enabled",
              type: "channel.follow",
              version: "2",
              cost: 0,
              condition: { broadcaster_user_id: "1337", moderator_user_id: "1337" },
              transport: { method: "webhook", callback: "https://example.com/webhooks/callback" },
              created_at: new Date(ctx.nowMs - 86_400_000).toISOString(),
            },
            event: {
              user_id: String(ctx.int(10_000, 99_999_999)),
              user_login: "awesome_user",
              user_name: "Awesome_User",
              broadcaster_user_id: "1337",
              broadcaster_user_login: "cooler_user",
              broadcaster_user_name: "Cooler_User",
              followed_at: ctx.iso,
            },
          },
        );
      },
    },
  ],
};
