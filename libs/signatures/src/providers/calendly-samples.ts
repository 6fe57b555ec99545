import { jsonRequest, type ProviderSamples } from "../sample.js";

const ORG = "https://api.calendly.com/organizations/AAAAAAAAAAAAAAAA";

/** invitee.created (developer.calendly.com, "Webhook payload"): the invitee and the scheduled event. */
export const calendlySamples: ProviderSamples = {
  samples: [
    {
      eventType: "invitee.created",
      build: (ctx) => {
        const event = `https://api.calendly.com/scheduled_events/${ctx.uuid()}`;
        const start = new Date(ctx.nowMs + 2 * 86_400_000).toISOString();
        return jsonRequest([["User-Agent", "Calendly-Webhooks"]], {
          created_at: ctx.iso,
          created_by: "https://api.calendly.com/users/BBBBBBBBBBBBBBBB",
          event: "invitee.created",
          payload: {
            uri: `${event}/invitees/${ctx.uuid()}`,
            email: "jenny.rosen@example.com",
            name: "Jenny Rosen",
            status: "active",
            timezone: "America/New_York",
            event,
            created_at: ctx.iso,
            updated_at: ctx.iso,
            questions_and_answers: [{ question: "What should we cover?", answer: "Pricing", position: 0 }],
            scheduled_event: {
              uri: event,
              name: "30 Minute Meeting",
              status: "active",
              start_time: start,
              end_time: new Date(Date.parse(start) + 1_800_000).toISOString(),
              event_type: "https://api.calendly.com/event_types/CCCCCCCCCCCCCCCC",
              location: { type: "zoom", join_url: "https://zoom.us/j/1234567890" },
            },
            cancel_url: `https://calendly.com/cancellations/${ctx.uuid()}`,
            reschedule_url: `https://calendly.com/reschedulings/${ctx.uuid()}`,
            rescheduled: false,
          },
          organization: ORG,
        });
      },
    },
  ],
};
