import { jsonRequest, type ProviderSamples } from "../sample.js";

/** meeting.started (developers.zoom.us, "Webhooks"): the account and the meeting object. */
export const zoomSamples: ProviderSamples = {
  samples: [
    {
      eventType: "meeting.started",
      build: (ctx) =>
        jsonRequest([["User-Agent", "Zoom Marketplace/1.0a"], ["clientid", ctx.id("", 22)]], {
          event: "meeting.started",
          event_ts: ctx.nowMs,
          payload: {
            account_id: ctx.id("", 22),
            object: {
              id: String(ctx.int(1_000_000_000, 9_999_999_999)),
              uuid: `${ctx.id("", 22)}==`,
              host_id: ctx.id("", 22),
              topic: "Weekly billing sync",
              type: 2,
              start_time: ctx.iso.replace(/\.\d+Z$/, "Z"),
              timezone: "America/Los_Angeles",
              duration: 30,
            },
          },
        }),
    },
  ],
};
