import { z } from "zod";
import { dateTime, extension } from "./common.js";

/** `POST /v1/endpoints/{endpointId}/events/{eventId}/signature` (design §19). */
export const eventSignatureRequest = z
  .strictObject({
    target_secret: z.string().min(1).max(1024).optional().describe("Sign with this secret instead of the endpoint's."),
    target_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe("Where the signed request will go, for providers that sign the URL (Twilio, Square, HubSpot); default: the capture's own URL."),
  })
  .meta({ ...extension });
export type EventSignatureRequest = z.input<typeof eventSignatureRequest>;

/** Fresh signature headers for the stored bytes: drop every captured header `replaces` names, then add `headers`. */
export const eventSignature = z
  .object({
    headers: z.record(z.string(), z.string()).describe("The provider's signature headers as it would send them now."),
    replaces: z.array(z.string()).describe("Lower-case names of the captured headers these replace."),
    provider: z.string(),
    signedAt: dateTime,
  })
  .meta({ ...extension });
export type EventSignatureJson = z.infer<typeof eventSignature>;
