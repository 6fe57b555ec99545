import { jsonRequest, type ProviderSamples, type SampleContext } from "../sample.js";

/** One event of SendGrid's Event Webhook (docs.sendgrid.com, "Event Webhook Reference"); batches are arrays. */
const event = (ctx: SampleContext, name: string, extra: Record<string, string | number>) => ({
  email: "example@test.com",
  timestamp: ctx.unix,
  "smtp-id": `<${ctx.id("", 22)}@ismtpd-555>`,
  event: name,
  category: ["billing"],
  sg_event_id: ctx.id("", 22),
  sg_message_id: `${ctx.id("", 22)}.filterdrecv-${ctx.id("", 10, "hex")}-1-${ctx.id("", 8, "upper")}-5`,
  ...extra,
});

export const sendgridSamples: ProviderSamples = {
  samples: [
    {
      eventType: "delivered",
      build: (ctx) => jsonRequest([["User-Agent", "SendGrid Event API"]], [event(ctx, "delivered", { response: "250 OK", ip: "168.1.1.1", tls: 1 })]),
    },
  ],
};
