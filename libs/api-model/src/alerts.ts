import { z } from "zod";
import { dateTime, extension, uuid, warning } from "./common.js";
import { ALERT_EVENTS, ALERT_CHANNEL_TYPES } from "./values.js";

/** Where an alert's delivery stands: as a relay delivery's, without the states only routing has. */
export const ALERT_STATES = ["pending", "delivered", "failed", "exhausted"] as const;
export type AlertState = (typeof ALERT_STATES)[number];

export const ALERT_CHANNEL_LIMITS = {
  /** Channels one account may have; one more is 429 quota_exceeded (quota alert_channels). */
  perAccount: 20,
  nameLength: 100,
  urlLength: 2048,
  /** Endpoints one channel may be restricted to. */
  endpointIds: 100,
} as const;

/** Repeats of one event type for one endpoint are coalesced into one alert per this many seconds (WHC_ALERT_COALESCE_S). */
export const ALERT_COALESCE_S = 600;
/** Attempts of one alert before it is exhausted (retried as relay deliveries are, design §11). */
export const ALERT_MAX_ATTEMPTS = 6;
/** One attempt's deadline: a channel that does not answer in this time is a timeout. */
export const ALERT_TIMEOUT_MS = 10_000;

/**
 * A webhook channel's signing secret as Standard Webhooks writes it: `whsec_` and the base64
 * of 24 to 65 random bytes. Generated (32 bytes) when a webhook channel is created without one.
 */
export const ALERT_SECRET_PATTERN = /^whsec_(?:[A-Za-z0-9+/]{4}){8,21}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The last alert a channel was sent, as it ended (or stands, while it is retried). */
export const alertDeliveryView = z
  .object({
    alertId: uuid.describe("The alert's id: its `webhook-id` header, the same on every attempt."),
    type: z.enum(ALERT_EVENTS),
    at: dateTime.describe("When its last attempt was made."),
    state: z.enum(ALERT_STATES).describe("`pending` while it is retried; `delivered` (2xx), `failed` (another answer, or a refused URL), `exhausted` (out of attempts)."),
    attempts: z.int().describe("Attempts made so far."),
    status: z.int().nullable().describe("What the channel answered to the last attempt; null when it did not answer."),
    error: z.string().nullable().describe("Why the last attempt got no answer (a network failure reason, `target_not_allowed`, `egress_capacity_exhausted`); null when it did."),
  })
  .meta({ ...extension });
export type AlertDeliveryJson = z.infer<typeof alertDeliveryView>;

/** A channel as `GET /v1/alert-channels` shows it: never its secret, only whether it has one. */
export const alertChannelView = z
  .object({
    id: uuid,
    name: z.string(),
    type: z.enum(ALERT_CHANNEL_TYPES),
    url: z.string().describe("Where alerts are sent. A Slack incoming webhook's URL is itself a credential: only keys with `alerts:write` see it."),
    events: z.array(z.enum(ALERT_EVENTS)).describe("What the channel is told about."),
    endpointIds: z.array(uuid).describe("The only endpoints whose alerts it gets; empty: every endpoint of the account."),
    secretSet: z.boolean().describe("A webhook channel signs with its secret (Standard Webhooks); a Slack channel has none."),
    createdAt: dateTime,
    lastDelivery: alertDeliveryView.nullable().describe("The last alert sent to the channel; null before the first."),
  })
  .meta({ ...extension });
export type AlertChannelJson = z.infer<typeof alertChannelView>;

export const alertChannelList = z.object({ items: z.array(alertChannelView) }).meta({ ...extension });
export type AlertChannelListJson = z.infer<typeof alertChannelList>;

/** `POST /v1/alert-channels`'s body. */
export const createAlertChannelRequest = z
  .strictObject({
    name: z.string().min(1).max(ALERT_CHANNEL_LIMITS.nameLength).describe("For people, unique in the account (`ops-slack`)."),
    type: z.enum(ALERT_CHANNEL_TYPES).describe("`webhook`: a signed JSON POST; `slack`: a Slack incoming webhook."),
    url: z
      .string()
      .min(1)
      .max(ALERT_CHANNEL_LIMITS.urlLength)
      .describe("http(s) URL the egress guard admits (as a forward destination: no private, loopback or metadata address unless the server allows private targets)."),
    events: z
      .array(z.enum(ALERT_EVENTS))
      .min(1)
      .max(ALERT_EVENTS.length)
      .describe("What to send; `test` alerts are sent to every channel that is tested, named here or not."),
    endpointIds: z
      .array(uuid)
      .max(ALERT_CHANNEL_LIMITS.endpointIds)
      .optional()
      .describe("Only these endpoints' alerts; absent or empty: every endpoint (only for a key that is not restricted itself)."),
    secret: z
      .string()
      .regex(ALERT_SECRET_PATTERN)
      .optional()
      .describe("webhook: the signing secret, `whsec_` and base64 of 24 to 64 bytes; absent: one is generated and shown once. Not for slack."),
  })
  .meta({ ...extension });
export type CreateAlertChannelRequest = z.input<typeof createAlertChannelRequest>;

/** `POST /v1/alert-channels`'s answer: the channel, and a webhook channel's secret, shown this once. */
export const createdAlertChannel = alertChannelView
  .extend({
    secret: z.string().optional().describe("webhook: the signing secret (given or generated). Shown this once; it is stored sealed."),
    warnings: z.array(warning).optional().describe("`dns_failure`: the URL's host does not resolve now; every alert looks it up again."),
  })
  .meta({ ...extension });
export type CreatedAlertChannelJson = z.infer<typeof createdAlertChannel>;

/** `POST /v1/alert-channels/{id}/test`'s answer: the test alert, queued in the alert outbox. */
export const alertTestAnswer = z
  .object({
    alertId: uuid.describe("The test alert's id (its `webhook-id`); the channel's `lastDelivery` shows how it went."),
    state: z.literal("pending"),
  })
  .meta({ ...extension });
export type AlertTestJson = z.infer<typeof alertTestAnswer>;

/**
 * What a webhook channel receives (the POST body, signed as Standard Webhooks). `data` holds
 * the alert's subject (its endpoint, event, listener...) and how many occurrences it stands for.
 */
export const alertMessage = z
  .object({
    type: z.enum(ALERT_EVENTS),
    timestamp: dateTime.describe("When the last occurrence it reports happened."),
    data: z
      .object({
        count: z.int().describe("Occurrences this alert reports: repeats of one type for one endpoint within WHC_ALERT_COALESCE_S are sent as one."),
        firstAt: dateTime,
        lastAt: dateTime,
        endpointId: uuid.optional(),
        endpointSlug: z.string().optional(),
      })
      .catchall(z.unknown()),
  })
  .meta({ ...extension });
export type AlertMessageJson = z.infer<typeof alertMessage>;
