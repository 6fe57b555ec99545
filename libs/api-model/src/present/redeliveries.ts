import type { RedeliveryFilter, RedeliveryJob } from "@whc/contracts";
import type { RedeliveryFilterJson, RedeliveryJobJson, RedeliveryJobState } from "../index.js";
import { isoTime } from "./json.js";

/** A bulk redelivery's /v1 filter as the catalog takes it (ListEventsRequest's fields, design §18). */
export function redeliveryFilterProto(f: RedeliveryFilterJson = {}): Omit<RedeliveryFilter, "$typeName"> {
  return {
    ...(f.from !== undefined ? { fromMs: BigInt(Date.parse(f.from)) } : {}),
    ...(f.to !== undefined ? { toMs: BigInt(Date.parse(f.to)) } : {}),
    ...(f.eventType !== undefined ? { eventType: f.eventType } : {}),
    ...(f.provider !== undefined ? { provider: f.provider } : {}),
    ...(f.responseCode !== undefined ? { responseCode: f.responseCode } : {}),
    ...(f.status !== undefined ? { verification: f.status } : {}),
    ...(f.forwardState !== undefined ? { forwardState: f.forwardState } : {}),
    ...(f.destinationId !== undefined ? { destinationId: f.destinationId.toLowerCase() } : {}),
    ...(f.schemaDrift !== undefined ? { schemaDrift: f.schemaDrift } : {}),
  };
}

/** The catalog's filter in the /v1 names again. */
export function redeliveryFilterJson(f: RedeliveryFilter | undefined): RedeliveryFilterJson {
  if (!f) return {};
  return {
    ...(f.fromMs !== undefined ? { from: isoTime(f.fromMs) } : {}),
    ...(f.toMs !== undefined ? { to: isoTime(f.toMs) } : {}),
    ...(f.eventType !== undefined ? { eventType: f.eventType } : {}),
    ...(f.provider !== undefined ? { provider: f.provider } : {}),
    ...(f.responseCode !== undefined ? { responseCode: f.responseCode } : {}),
    ...(f.verification !== undefined ? { status: f.verification as NonNullable<RedeliveryFilterJson["status"]> } : {}),
    ...(f.forwardState !== undefined ? { forwardState: f.forwardState as NonNullable<RedeliveryFilterJson["forwardState"]> } : {}),
    ...(f.destinationId !== undefined ? { destinationId: f.destinationId } : {}),
    ...(f.schemaDrift !== undefined ? { schemaDrift: f.schemaDrift } : {}),
  };
}

/** A job as `GET /v1/endpoints/{id}/redeliveries/{jobId}` shows it. */
export function redeliveryJobJson(j: RedeliveryJob): RedeliveryJobJson {
  return {
    id: j.id,
    endpointId: j.endpointId,
    state: j.state as RedeliveryJobState,
    total: Number(j.total),
    queued: Number(j.queued),
    done: Number(j.done),
    failed: Number(j.failed),
    filter: redeliveryFilterJson(j.filter),
    createdAt: isoTime(j.createdAtMs),
    updatedAt: isoTime(j.updatedAtMs),
    finishedAt: j.finishedAtMs === undefined ? null : isoTime(j.finishedAtMs),
    createdBy: { keyId: j.createdByKeyId, keyPrefix: j.createdByKeyPrefix },
  };
}
