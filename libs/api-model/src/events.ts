import { z } from "zod";
import { BODY_ENCODINGS, DECRYPTIONS, DELIVERY_STATES, VERIFICATIONS } from "./values.js";
import { dateTime, extension, uuid } from "./common.js";
import { forwardedResponse } from "./forwarding.js";
import { diagnostic } from "./diagnostic.js";
import { redactionCounts } from "./redaction.js";
import { schemaDrift } from "./schemas.js";


const summaryFields = {
  id: uuid,
  endpointId: uuid,
  receivedAt: dateTime,
  method: z.string(),
  canonicalEventType: z.string().optional(),
  provider: z.string(),
  verification: z.string(),
  verificationFailureReason: z.string().optional(),
  responseCode: z.int32(),
  readAt: dateTime.optional(),
  truncated: z.boolean(),
  originalSizeBytes: z.int(),
  decryption: z.enum(DECRYPTIONS),
  forwardState: z
    .enum(DELIVERY_STATES)
    .optional()
    .meta({ ...extension, description: "The state of its deliveries together (design §17: pending if any is pending or held, else exhausted, failed, delivered, skipped, duplicate); absent: never forwarded." }),
  duplicateOf: uuid
    .optional()
    .meta({ ...extension, description: "The endpoint's first capture with the same deduplication key within its window (design §17): this one was stored and answered, and not forwarded. Absent: not a duplicate." }),
};

/** An item of the event list (operation 5). */
export const eventSummary = z.object({ ...summaryFields, searchMatchedTruncated: z.boolean().optional() });
export type EventSummaryJson = z.infer<typeof eventSummary>;

export const eventList = z.object({
  items: z.array(eventSummary),
  nextBefore: dateTime.optional(),
  nextBeforeId: uuid.optional(),
  nextAfter: dateTime.optional(),
  nextAfterId: uuid.optional(),
  searchExcludedMetadataOnlyCount: z.int32().optional(),
});
export type EventListJson = z.infer<typeof eventList>;

/** Operation 6: every summary field but searchMatchedTruncated, plus path, headers, body and the rest. */
export const eventDetail = z.object({
  ...summaryFields,
  path: z.string().meta({
    ...extension,
    description:
      "The request target after the endpoint's webhookUrl: its sub-path and query exactly as they arrived (never re-encoded); \"\" when the capture had none.",
  }),
  headers: z.record(z.string(), z.array(z.string())),
  remoteIp: z.string(),
  body: z.string().optional(),
  bodyEncoding: z.enum(BODY_ENCODINGS).optional(),
  diagnostic,
  redactions: redactionCounts.optional(),
  schemaDrift: schemaDrift.optional(),
  forwardedResponse: z.union([forwardedResponse, z.strictObject({})]).describe("{} until the event is forwarded (design §11)."),
});
export type EventDetailJson = z.infer<typeof eventDetail>;

const int32Text = z
  .string()
  .regex(/^-?\d{1,10}$/)
  .transform(Number)
  .pipe(z.number().int().min(-2147483648).max(2147483647));

/** `25`, `25s`: 0 to 60 seconds. */
const waitText = z
  .string()
  .regex(/^\d{1,2}s?$/)
  .transform((v) => Number(v.replace(/s$/, "")))
  .pipe(z.number().int().min(0).max(60));

const CURSOR_PAIRS = [
  ["before", "beforeId"],
  ["after", "afterId"],
] as const;

/** The cursor pairs of operation 5 (and of the export, where they bound it). */
const cursorFields = {
  before: dateTime.optional().describe("Cursor: the page strictly older than (before, beforeId). Needs beforeId."),
  beforeId: uuid.optional().describe("Cursor pair of `before`."),
  after: dateTime.optional().describe("Cursor: the `limit` events strictly newer than (after, afterId), closest to it. Needs afterId."),
  afterId: uuid.optional().describe("Cursor pair of `after`."),
};

/** Which events: the filters the list, the follow and the export share. */
const filterFields = {
  from: dateTime.optional().describe("receivedAt >= from (inclusive)."),
  to: dateTime.optional().describe("receivedAt < to (exclusive)."),
  eventType: z.string().min(1).max(200).optional().describe("canonicalEventType equals."),
  provider: z.string().min(1).max(50).optional().describe("provider equals."),
  responseCode: int32Text.optional().describe("responseCode equals (int32)."),
  status: z.enum(VERIFICATIONS).optional().describe("verification equals: verified, failed or unverified."),
  forwardState: z
    .enum([...DELIVERY_STATES, "none"])
    .optional()
    .meta({ ...extension, description: "The state of the event's deliveries together (the summary's forwardState) equals; none: never forwarded." }),
  destinationId: uuid
    .optional()
    .meta({ ...extension, description: "Only events with a delivery to this destination (design §17; the nil UUID: attempts `whc listen` reported)." }),
  search: z.string().max(500).optional().describe("Every word (letters and digits, case-insensitive) must occur in the body."),
  duplicate: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .meta({ ...extension, description: "true: only duplicates (events with `duplicateOf`, design §17); false: only the others." }),
  schemaDrift: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .meta({ ...extension, description: "true: only events whose JSON body drifted from what the endpoint learned of its type (`schemaDrift` in the detail); false: only the others." }),
};

/** The page size of the event list and the audit log: 1-200, default 50. */
export const pageLimit = z
  .string()
  .regex(/^\d{1,4}$/)
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .optional()
  .describe("Page size, 1-200, default 50.");

/** A cursor is a pair: one half alone is refused, naming the missing half. */
export function requireCursorPairs(q: { before?: unknown; beforeId?: unknown; after?: unknown; afterId?: unknown }, ctx: z.RefinementCtx): void {
  for (const [time, id] of CURSOR_PAIRS) {
    if ((q[time] === undefined) !== (q[id] === undefined)) {
      const missing = q[time] === undefined ? time : id;
      ctx.addIssue({ code: "invalid_type", expected: "string", path: [missing], message: `${missing} is required with its pair` });
    }
  }
}

/** Operation 5's query, as text in (what a client sends) and typed values out. */
export const listEventsQuery = z
  .strictObject({
    ...cursorFields,
    ...filterFields,
    wait: waitText.optional().describe("Seconds (0-60, `25` or `25s`) to hold an empty page until a capture arrives."),
    limit: pageLimit,
  })
  .superRefine(requireCursorPairs);
/** What a client sends: every parameter as text. */
export type ListEventsQueryText = z.input<typeof listEventsQuery>;
export type ListEventsQuery = z.output<typeof listEventsQuery>;

/**
 * The bulk export's query (extension): the list's filters and cursors, without paging (`limit`)
 * or waiting. The export runs oldest first, so `after`/`afterId` resumes one that was cut short
 * and `before`/`beforeId` ends it.
 */
export const exportEventsQuery = z.strictObject({ ...cursorFields, ...filterFields }).superRefine(requireCursorPairs);
export type ExportEventsQueryText = z.input<typeof exportEventsQuery>;
export type ExportEventsQuery = z.output<typeof exportEventsQuery>;

