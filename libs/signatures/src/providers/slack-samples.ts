import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

const TEAM = "T0001ABCDEF";
const API_APP = "A0001ABCDEF";

/** An Events API `event_callback` envelope (api.slack.com/apis/events-api) around one event. */
function callback(ctx: SampleContext, event: JsonValue) {
  return jsonRequest([["User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)"]], {
    token: ctx.id("", 24),
    team_id: TEAM,
    api_app_id: API_APP,
    event,
    type: "event_callback",
    event_id: ctx.id("Ev", 9, "upper"),
    event_time: ctx.unix,
    authorizations: [{ enterprise_id: null, team_id: TEAM, user_id: "U0BOT12345", is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: ctx.id("4-", 40, "alnum"),
  });
}

const ts = (ctx: SampleContext) => `${ctx.unix}.${ctx.id("", 6, "digits")}`;

export const slackSamples: ProviderSamples = {
  samples: [
    {
      eventType: "app_mention",
      build: (ctx) => {
        const at = ts(ctx);
        return callback(ctx, { type: "app_mention", user: "U061F7AUR", text: "<@U0BOT12345> is the deploy done?", ts: at, channel: "C0LAN2Q65", event_ts: at, team: TEAM });
      },
    },
    {
      eventType: "message",
      build: (ctx) => {
        const at = ts(ctx);
        return callback(ctx, { type: "message", channel: "C0LAN2Q65", user: "U061F7AUR", text: "Invoices went out.", ts: at, event_ts: at, channel_type: "channel", team: TEAM });
      },
    },
    {
      eventType: "reaction_added",
      build: (ctx) =>
        callback(ctx, {
          type: "reaction_added",
          user: "U061F7AUR",
          reaction: "white_check_mark",
          item_user: "U0G9QF9C6",
          item: { type: "message", channel: "C0LAN2Q65", ts: ts(ctx) },
          event_ts: ts(ctx),
        }),
    },
    {
      eventType: "team_join",
      build: (ctx) =>
        callback(ctx, {
          type: "team_join",
          user: { id: ctx.id("U", 10, "upper"), team_id: TEAM, name: "jenny", real_name: "Jenny Rosen", is_bot: false, tz: "America/Los_Angeles" },
          event_ts: ts(ctx),
        }),
    },
  ],
};
