import { z } from "zod";
import { headerName, providerName } from "./common.js";
import { fileJsonSchema } from "./file-schema.js";

/**
 * A scenario (design §19): captured requests as a fixture, written by `whc scenario record` and
 * sent again, in order and with their gaps, by `whc scenario play`. docs/scenario.schema.json
 * is generated from this module (`scenarioJsonSchema`).
 */

export const SCENARIO_LIMITS = {
  events: 10_000,
  /** The whole file, as read by `whc scenario play`. */
  fileBytes: 256 * 1024 * 1024,
  /** One event's body, decoded. */
  bodyBytes: 16 * 1024 * 1024,
  /** One week: a scenario longer than that is a recording mistake. */
  offsetMs: 7 * 24 * 3_600_000,
  headerValues: 100,
  headerValueLength: 16_384,
  targetLength: 8192,
} as const;

export const scenarioEvent = z
  .strictObject({
    offsetMs: z.int().min(0).max(SCENARIO_LIMITS.offsetMs).describe("Milliseconds after the first event was received; the first is 0."),
    method: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/)
      .describe("The request's method as captured (POST, PUT...)."),
    path: z
      .string()
      .max(SCENARIO_LIMITS.targetLength)
      .regex(/^(\/[^?#]*)?$/)
      .describe("The sub-path after the endpoint's webhook URL, as it arrived (\"\" when none); play appends it to --to."),
    query: z.string().max(SCENARIO_LIMITS.targetLength).describe("The query after `?`, as it arrived (\"\" when none)."),
    headers: z
      .record(headerName, z.array(z.string().max(SCENARIO_LIMITS.headerValueLength)).min(1).max(SCENARIO_LIMITS.headerValues))
      .describe("The captured headers (names as captured), except those of the capture's own hop (Host, Content-Length, X-Forwarded-*...)."),
    bodyBase64: z
      .base64()
      .max(Math.ceil(SCENARIO_LIMITS.bodyBytes / 3) * 4)
      .describe("The body's exact bytes."),
  })
  .describe("One request, oldest first.");
export type ScenarioEvent = z.output<typeof scenarioEvent>;

export const scenario = z
  .strictObject({
    version: z.literal(1),
    provider: providerName.describe("Whose signing scheme `play --resign` signs with (a provider of docs/providers.md)."),
    events: z.array(scenarioEvent).max(SCENARIO_LIMITS.events),
  })
  .describe("A Webhook Capture scenario: `whc scenario record` writes it, `whc scenario play` sends it again.");
export type Scenario = z.output<typeof scenario>;

/** The JSON Schema of the format (docs/scenario.schema.json). */
export function scenarioJsonSchema(): Record<string, unknown> {
  return fileJsonSchema(scenario, "Webhook Capture scenario (whc scenario record, whc scenario play)");
}
