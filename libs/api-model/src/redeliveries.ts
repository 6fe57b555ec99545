import { z } from "zod";
import { dateTime, extension, uuid } from "./common.js";
import { DELIVERY_STATES, VERIFICATIONS } from "./values.js";

/**
 * Bulk redelivery (design §18; ADR 0089): a job that puts the deliveries of every event
 * matching the event list's filters back into the relay outbox, run by the replay service.
 */

/** A job's states: `running` until every delivery it put back has ended, then `done`. */
export const REDELIVERY_JOB_STATES = ["running", "done", "failed", "canceled"] as const;
export type RedeliveryJobState = (typeof REDELIVERY_JOB_STATES)[number];

/** The delivery states a job redoes; pending and held ones are waiting already, duplicates are not sent by design. */
export const REDELIVERED_STATES = ["delivered", "failed", "exhausted", "skipped"] as const;

export const REDELIVERY_LIMITS = {
  /** Running jobs one account may have; one more is 429 quota_exceeded (quota redelivery_jobs). */
  runningPerAccount: 3,
  /** Deliveries one job may redo; a filter matching more is 429 quota_exceeded (quota redelivery_deliveries). */
  deliveriesPerJob: 100_000,
  /** Jobs a list answers: the endpoint's newest. */
  listed: 100,
} as const;

/** Which events: the filters of `GET /v1/endpoints/{id}/events`, as JSON values (search excepted). */
export const redeliveryFilter = z
  .strictObject({
    from: dateTime.optional().describe("receivedAt >= from (inclusive)."),
    to: dateTime.optional().describe("receivedAt < to (exclusive)."),
    eventType: z.string().min(1).max(200).optional().describe("canonicalEventType equals."),
    provider: z.string().min(1).max(50).optional().describe("provider equals."),
    responseCode: z.int32().optional().describe("responseCode equals."),
    status: z.enum(VERIFICATIONS).optional().describe("verification equals: verified, failed or unverified."),
    forwardState: z
      .enum([...DELIVERY_STATES, "none"])
      .optional()
      .describe("The state of the event's deliveries together (the list's forwardState) equals."),
    destinationId: uuid
      .optional()
      .describe("Only events with a delivery to this destination, and only that delivery is redone (the others of the event are left as they are)."),
    schemaDrift: z.boolean().optional().describe("true: only events whose JSON body drifted from the endpoint's learned schema; false: only the others."),
  })
  .meta({ ...extension, description: "The event list's filters (design §3, §17), AND-ed; {} or absent: every event of the endpoint." });
export type RedeliveryFilterJson = z.infer<typeof redeliveryFilter>;

/** `POST /v1/endpoints/{id}/redeliveries`. */
export const redeliveryRequest = z
  .strictObject({
    filter: redeliveryFilter.optional(),
    dryRun: z.boolean().optional().describe("true: only count what a job would redo (200 `{\"count\"}`); nothing is started."),
  })
  .meta({ ...extension });
export type RedeliveryRequest = z.input<typeof redeliveryRequest>;

/** A dry run's answer: how many deliveries a job with this filter would redo now. */
export const redeliveryCount = z.object({ count: z.int() }).meta({ ...extension });
export type RedeliveryCountJson = z.infer<typeof redeliveryCount>;

export const redeliveryJob = z
  .object({
    id: uuid,
    endpointId: uuid,
    state: z
      .enum(REDELIVERY_JOB_STATES)
      .describe(
        "`running` while events are walked or deliveries it put back are still pending; `done` once every one ended; " +
          "`canceled` (stopped by a cancel: what it already put back still goes); `failed` (the endpoint lost the destinations it redoes).",
      ),
    total: z.int().describe("Deliveries the job redoes: counted when it started, exact once every matching event was walked."),
    queued: z.int().describe("Deliveries put back in the outbox so far (pending, due at once, trigger `bulk`)."),
    done: z.int().describe("Of those, ended delivered (or skipped by the destination's transform)."),
    failed: z.int().describe("Of those, ended failed or exhausted."),
    filter: redeliveryFilter,
    createdAt: dateTime,
    updatedAt: dateTime,
    finishedAt: dateTime.nullable().describe("When it became done, failed or canceled; null while running."),
    createdBy: z.object({ keyId: uuid, keyPrefix: z.string() }).describe("The API key that started it."),
  })
  .meta({ ...extension });
export type RedeliveryJobJson = z.infer<typeof redeliveryJob>;

export const redeliveryJobList = z.object({ items: z.array(redeliveryJob).describe("Newest first, at most 100.") }).meta({ ...extension });
export type RedeliveryJobListJson = z.infer<typeof redeliveryJobList>;
