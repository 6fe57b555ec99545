import { jsonRequest, type ProviderSamples } from "../sample.js";

/** A form_response (typeform.com/developers/webhooks, "Example webhook payload"). */
export const typeformSamples: ProviderSamples = {
  samples: [
    {
      eventType: "form_response",
      build: (ctx) =>
        jsonRequest([["User-Agent", "Typeform Webhooks"]], {
          event_id: ctx.id("", 26, "upper"),
          event_type: "form_response",
          form_response: {
            form_id: "lT4Z3j",
            token: ctx.id("", 32, "lower"),
            landed_at: new Date(ctx.nowMs - 90_000).toISOString().replace(/\.\d+Z$/, "Z"),
            submitted_at: ctx.iso.replace(/\.\d+Z$/, "Z"),
            definition: {
              id: "lT4Z3j",
              title: "Customer feedback",
              fields: [
                { id: "DlXFaesGBpoF", title: "How likely are you to recommend us?", type: "opinion_scale", ref: "nps" },
                { id: "SMEUb7VJz92Q", title: "What could we do better?", type: "long_text", ref: "improve" },
              ],
            },
            answers: [
              { type: "number", number: 9, field: { id: "DlXFaesGBpoF", type: "opinion_scale", ref: "nps" } },
              { type: "text", text: "Faster invoices.", field: { id: "SMEUb7VJz92Q", type: "long_text", ref: "improve" } },
            ],
          },
        }),
    },
  ],
};
