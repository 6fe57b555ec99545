import { z } from "zod";
import { ALERT_CHANNEL_TYPES, ALERT_EVENTS, FORWARDING_MODES, MAX_DESTINATIONS, SLUG_PATTERN } from "./values.js";
import { createEndpointRequest } from "./endpoints.js";
import { destinationSettings } from "./forwarding.js";
import { breakerSettings, destinationFilter, destinationName, rateLimitSettings, transformSource } from "./destinations.js";
import { fileJsonSchema } from "./file-schema.js";
import { ALERT_CHANNEL_LIMITS } from "./alerts.js";
import { inboundSettings } from "./inbound.js";

/**
 * The file `whc apply` reads and `whc export-config` writes (design §16, "Configuration as
 * code"): the account's endpoints keyed by slug, and its alert channels. An endpoint's fields
 * are the /v1 create request's, except that no secret is ever written in the file: each is
 * named by the environment variable that holds it (`secretFromEnv`). The JSON Schema of
 * docs/webhooks.schema.json is generated from this module (`configFileJsonSchema`).
 */

export const CONFIG_FILE_LIMITS = { endpoints: 10_000, alertChannels: 100, bytes: 16 * 1024 * 1024 } as const;


const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)
  .describe("The name of an environment variable of the process running `whc apply`; its value is the secret.");

const slug = z.string().regex(SLUG_PATTERN).describe("Lower-case letters, digits, `-` and `_`, at most 64; the endpoint's key in the account.");

/** The indexes of values given before at a lower index. */
function repeats(values: string[]): number[] {
  return values.flatMap((v, i) => (values.indexOf(v) < i ? [i] : []));
}

const settable = createEndpointRequest.shape;

/** A destination's settings as the file gives them: the target secret named, never written. */
export const configForward = destinationSettings
  .extend({
    targetSecretFromEnv: envName
      .optional()
      .describe("Re-sign forwarded requests with the secret in this environment variable (written once: whc cannot read it back)."),
  })
  .describe("Where relay and proxy endpoints forward; absent: nowhere (the endpoint's forward settings are removed).");

const inboundShape = inboundSettings.shape;

/** Inbound protection as the file gives it (design §16): its password and token value named, never written. */
export const configInbound = z
  .strictObject({
    basicAuth: z
      .strictObject({ username: inboundShape.basicAuth.unwrap().shape.username, passwordFromEnv: envName.optional().describe("The password is this environment variable's value; absent: the one set is kept (an exported file names none).") })
      .optional(),
    headerToken: z
      .strictObject({ name: inboundShape.headerToken.unwrap().shape.name, valueFromEnv: envName.optional().describe("The header's value is this environment variable's value; absent: the one set is kept.") })
      .optional(),
    allowIps: inboundShape.allowIps,
    methods: inboundShape.methods,
  })
  .describe("Who may send to the webhook URL (docs/api.md); absent: anyone. Set when the endpoint has none; a password or token already set is kept.");
export type ConfigInbound = z.output<typeof configInbound>;
/**
 * One of a relay endpoint's destinations (design §17) as the file gives it: `whc apply`
 * matches it to the endpoint's destination of the same name (ids are the service's, never in
 * the file). rateLimit, breaker and paused are its delivery control (design §18).
 */
export const configDestination = destinationSettings
  .extend({
    name: destinationName.describe("Unique within the endpoint: whc apply matches the endpoint's destinations by name."),
    filter: destinationFilter.optional(),
    transform: transformSource.optional(),
    rateLimit: rateLimitSettings.optional(),
    breaker: breakerSettings.optional(),
    paused: z.boolean().optional().describe("Hold this destination's deliveries (nothing is sent) until false again. Absent: false."),
    targetSecretFromEnv: envName
      .optional()
      .describe("Re-sign this destination's requests with the secret in this environment variable (written once: whc cannot read it back)."),
  })
  .describe("A destination of a relay endpoint: where its matching captures go.");
export type ConfigDestination = z.output<typeof configDestination>;

export const configEndpoint = z
  .strictObject({
    slug,
    displayName: settable.displayName.describe("Absent: the slug."),
    operatingMode: settable.operatingMode.describe("Absent: `capture`."),
    status: settable.status.describe("Absent: `active`; `paused` refuses captures with 503."),
    replayFromDashboard: settable.replayFromDashboard.describe("Absent: true."),
    replayFromApi: settable.replayFromApi.describe("Absent: true."),
    provider: settable.provider.describe("A provider of docs/providers.md; absent: `generic`."),
    genericSignatureHeader: settable.genericSignatureHeader.describe("generic provider: the header holding the signature; absent: left as it is."),
    genericSignaturePrefix: settable.genericSignaturePrefix.describe("generic provider: the text before the signature in that header; absent: none."),
    response: settable.response.describe("What the endpoint answers (docs/api.md); absent: 200 with the event id."),
    secretFromEnv: envName
      .optional()
      .describe("The signing secret is the value of this environment variable. Set when the endpoint has none; whc cannot read a secret back, so one already set is kept."),
    forward: configForward.optional(),
    redact: settable.redact.describe("What is replaced before a capture is stored (docs/api.md); absent: nothing."),
    dedupe: settable.dedupe.describe("How repeated captures are told (docs/api.md, Deduplication): stored, marked duplicateOf, not forwarded; absent: none. Not on a proxy endpoint."),
    inbound: configInbound.optional(),
    destinations: z
      .array(configDestination)
      .min(1)
      .max(MAX_DESTINATIONS)
      .optional()
      .describe(
        `Instead of forward: a relay endpoint's destinations, 1 to ${MAX_DESTINATIONS} (a proxy endpoint's one, without a filter); ` +
          "absent with forward absent: none (the endpoint's are removed).",
      ),
  })
  .refine((e) => e.forward !== undefined || e.destinations !== undefined || !(FORWARDING_MODES as readonly string[]).includes(e.operatingMode ?? "capture"), {
    message: "operatingMode relay and proxy need forward settings or destinations",
    path: ["forward"],
    params: { reason: "required" },
  })
  .superRefine((e, ctx) => {
    if (e.forward !== undefined && e.destinations !== undefined) {
      ctx.addIssue({ code: "custom", path: ["destinations"], message: "give forward or destinations, not both", params: { reason: "unsupported" } });
    }
    const names = (e.destinations ?? []).map((d) => d.name);
    for (const i of repeats(names)) {
      ctx.addIssue({ code: "custom", path: ["destinations", i, "name"], message: `destination ${names[i]} is given more than once`, params: { reason: "duplicate" } });
    }
    if (e.operatingMode === "proxy" && e.dedupe !== undefined) {
      ctx.addIssue({ code: "custom", path: ["dedupe"], message: "a proxy endpoint forwards every capture to answer its sender: it takes no dedupe", params: { reason: "unsupported" } });
    }
    if (e.operatingMode === "proxy" && e.destinations !== undefined) {
      if (e.destinations.length > 1) ctx.addIssue({ code: "custom", path: ["destinations"], message: "a proxy endpoint has exactly one destination", params: { reason: "unsupported" } });
      e.destinations.forEach((d, i) => {
        if (d.filter) ctx.addIssue({ code: "custom", path: ["destinations", i, "filter"], message: "a proxy endpoint forwards every capture: it takes no filter", params: { reason: "unsupported" } });
      });
    }
  });
export type ConfigEndpoint = z.output<typeof configEndpoint>;

export const configAlertChannel = z.strictObject({
  name: z.string().min(1).max(ALERT_CHANNEL_LIMITS.nameLength).describe("The channel's name, unique in the account: how the file and the account's channels are matched."),
  type: z.enum(ALERT_CHANNEL_TYPES),
  url: z.string().min(1).max(ALERT_CHANNEL_LIMITS.urlLength),
  events: z.array(z.enum(ALERT_EVENTS)).min(1).max(ALERT_EVENTS.length),
  endpoints: z.array(slug).max(CONFIG_FILE_LIMITS.endpoints).optional().describe("Slugs of endpoints of this file; absent: every endpoint."),
  secretFromEnv: envName.optional().describe("webhook: the signing secret `whsec_...` is the value of this environment variable."),
});
export type ConfigAlertChannel = z.output<typeof configAlertChannel>;

export const configFile = z
  .strictObject({
    endpoints: z.array(configEndpoint).max(CONFIG_FILE_LIMITS.endpoints).default([]).describe("The account's endpoints; each is matched to the account's by `slug`."),
    alertChannels: z
      .array(configAlertChannel)
      .max(CONFIG_FILE_LIMITS.alertChannels)
      .default([])
      .describe("The account's alert channels (docs/api.md, \"Alert channels\"); each is matched to the account's by `name`."),
  })
  .superRefine((file, ctx) => {
    const slugs = file.endpoints.map((e) => e.slug);
    for (const i of repeats(slugs)) ctx.addIssue({ code: "custom", message: `slug ${slugs[i]} is given more than once`, path: ["endpoints", i, "slug"] });
    const names = file.alertChannels.map((c) => c.name);
    for (const i of repeats(names)) ctx.addIssue({ code: "custom", message: `alert channel ${names[i]} is given more than once`, path: ["alertChannels", i, "name"] });
    file.alertChannels.forEach((c, i) => {
      (c.endpoints ?? []).forEach((s, j) => {
        if (!slugs.includes(s)) ctx.addIssue({ code: "custom", message: `no endpoint ${s} in this file`, path: ["alertChannels", i, "endpoints", j] });
      });
    });
  })
  .describe("Webhook Capture configuration as code: `whc apply -f FILE` makes the account match it, `whc export-config` writes it.");
export type ConfigFile = z.output<typeof configFile>;
/** What a person writes (before defaults). */
export type ConfigFileInput = z.input<typeof configFile>;

/** The JSON Schema of the file (docs/webhooks.schema.json): what editors and CI check a file against. */
export function configFileJsonSchema(): Record<string, unknown> {
  return fileJsonSchema(configFile, "Webhook Capture configuration (whc apply, whc export-config)");
}
