import { jsonRequest, type ProviderSamples } from "../sample.js";

/** HubSpot batches events in an array (developers.hubspot.com, "Webhooks API"): one contact created. */
export const hubspotSamples: ProviderSamples = {
  samples: [
    {
      eventType: "contact.creation",
      build: (ctx) =>
        jsonRequest([["User-Agent", "HubSpot Connect 2.0 (http://dev.hubspot.com/)"]], [
          {
            eventId: ctx.int(100_000_000, 4_000_000_000),
            subscriptionId: 1234567,
            portalId: 62515,
            appId: 54321,
            occurredAt: ctx.nowMs,
            subscriptionType: "contact.creation",
            attemptNumber: 0,
            objectId: ctx.int(1000, 99_999_999),
            changeFlag: "CREATED",
            changeSource: "CRM_UI",
          },
        ]),
    },
  ],
};
