import { formRequest, type ProviderSamples, type SampleContext } from "../sample.js";

const ACCOUNT = "AC" + "3f1c8b2a9e4d5f60718293a4b5c6d7e8";

/** Twilio posts callbacks as forms, with an idempotency token per delivery. */
const headers = (ctx: SampleContext): [string, string][] => [
  ["User-Agent", "TwilioProxy/1.1"],
  ["I-Twilio-Idempotency-Token", ctx.uuid()],
];

export const twilioSamples: ProviderSamples = {
  samples: [
    {
      // An incoming SMS to a Twilio number (twilio.com/docs/messaging/guides/webhook-request).
      eventType: "received",
      build: (ctx) => {
        const sid = ctx.id("SM", 32, "hex");
        return formRequest(headers(ctx), [
          ["ToCountry", "US"],
          ["ToState", "CA"],
          ["SmsMessageSid", sid],
          ["NumMedia", "0"],
          ["ToCity", "SAN FRANCISCO"],
          ["FromZip", "94103"],
          ["SmsSid", sid],
          ["FromState", "CA"],
          ["SmsStatus", "received"],
          ["FromCity", "SAN FRANCISCO"],
          ["Body", "Is my order on its way?"],
          ["FromCountry", "US"],
          ["To", "+15005550006"],
          ["ToZip", "94105"],
          ["NumSegments", "1"],
          ["MessageSid", sid],
          ["AccountSid", ACCOUNT],
          ["From", "+14155552671"],
          ["ApiVersion", "2010-04-01"],
        ]);
      },
    },
    {
      // A status callback of an outgoing message.
      eventType: "delivered",
      build: (ctx) => {
        const sid = ctx.id("SM", 32, "hex");
        return formRequest(headers(ctx), [
          ["SmsSid", sid],
          ["SmsStatus", "delivered"],
          ["MessageStatus", "delivered"],
          ["To", "+14155552671"],
          ["MessagingServiceSid", ctx.id("MG", 32, "hex")],
          ["MessageSid", sid],
          ["AccountSid", ACCOUNT],
          ["From", "+15005550006"],
          ["ApiVersion", "2010-04-01"],
        ]);
      },
    },
    {
      // A voice call's status callback once it ended.
      eventType: "completed",
      build: (ctx) =>
        formRequest(headers(ctx), [
          ["Called", "+15005550006"],
          ["ToState", "CA"],
          ["CallerCountry", "US"],
          ["Direction", "inbound"],
          ["Timestamp", new Date(ctx.nowMs).toUTCString().replace("GMT", "+0000")],
          ["CallbackSource", "call-progress-events"],
          ["SequenceNumber", "0"],
          ["CallSid", ctx.id("CA", 32, "hex")],
          ["To", "+15005550006"],
          ["CallStatus", "completed"],
          ["Duration", "1"],
          ["CallDuration", "42"],
          ["From", "+14155552671"],
          ["AccountSid", ACCOUNT],
          ["ApiVersion", "2010-04-01"],
        ]),
    },
  ],
};
