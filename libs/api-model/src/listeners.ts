import { z } from "zod";
import { dateTime, extension, uuid } from "./common.js";

/**
 * Listener liveness (design §19; ADR 0062): a running `whc listen` registers and heartbeats,
 * and `GET .../listeners` shows who is listening, how far behind, and whether it is stuck.
 */
export const LISTENER_LIMITS = {
  /** Live listeners one endpoint may have; one more is 429 quota_exceeded (quota listeners). */
  perEndpoint: 20,
  hostLength: 255,
  lastErrorLength: 1000,
  /** `lagEvents` is counted up to this: the value means "this many or more". */
  lagBound: 1000,
} as const;

export const LISTENER_TTL_S = 30;
/** A listener behind at every heartbeat for this long, its lag never falling, is stalled (listener.stalled). */
export const LISTENER_STALL_S = 120;

/** Where a listener is: the last event it is past, as the list's `after`/`afterId` pair. */
export const listenerCursor = z.strictObject({
  at: dateTime.describe("receivedAt of the last event the listener is past."),
  id: uuid.describe("Its id."),
});
export type ListenerCursorJson = z.infer<typeof listenerCursor>;

/** `PUT /v1/endpoints/{endpointId}/listeners/{listenerId}`: one heartbeat. */
export const listenerHeartbeat = z
  .strictObject({
    host: z.string().min(1).max(LISTENER_LIMITS.hostLength).describe("Where the listener runs (its host name), for people."),
    startedAt: dateTime.describe("When the listener started."),
    cursor: listenerCursor.nullable().optional().describe("The last event it is past; null or absent before the first."),
    lastError: z.string().max(LISTENER_LIMITS.lastErrorLength).nullable().optional().describe("The last error it met (its local app unreachable, say); null once it recovered."),
  })
  .meta({ ...extension });
export type ListenerHeartbeatRequest = z.input<typeof listenerHeartbeat>;

/** A live listener of an endpoint. */
export const listenerView = z
  .object({
    id: uuid,
    host: z.string(),
    startedAt: dateTime,
    lastSeenAt: dateTime.describe("Its last heartbeat; it is gone WHC_LISTENER_TTL_S (30 s) after it."),
    cursor: listenerCursor.nullable(),
    lagEvents: z.int().describe(`The endpoint's events after the cursor at the last heartbeat, counted up to ${LISTENER_LIMITS.lagBound}.`),
    lastError: z.string().nullable(),
    stalled: z.boolean().describe(`Behind at every heartbeat for ${LISTENER_STALL_S} s, its lag never falling: stuck or falling further behind (listener.stalled).`),
  })
  .meta({ ...extension });
export type ListenerJson = z.infer<typeof listenerView>;

export const listenerList = z.object({ items: z.array(listenerView) }).meta({ ...extension });
export type ListenerListJson = z.infer<typeof listenerList>;
