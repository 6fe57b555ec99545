import type { ServiceImpl } from "@connectrpc/connect";
import type { CatalogService, RedeliveryFilter as RedeliveryFilterProto, RedeliveryJob } from "@whc/contracts";
import { DELIVERY_STATES, REDELIVERY_LIMITS } from "@whc/api-model";
import { notFound, validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import type { RedeliveryFilter, RedeliveryJobRecord, RedeliveryLimits } from "./types.js";
import { isUuid, newId, requireUuid } from "./ids.js";
import { auditEntryOf } from "./service-audit.js";

/** The most events one page of a job walks. */
export const MAX_REDELIVERY_PAGE = 1000;
/** A longer lease would keep a job that long from other runners after its runner died. */
const MAX_LEASE_MS = 86_400_000;

function optionalNumber(v: bigint | undefined): number | undefined {
  return v === undefined ? undefined : Number(v);
}

/** The proto filter as the store takes it, each field checked as the event list checks it. */
export function redeliveryFilterOf(f: RedeliveryFilterProto | undefined): RedeliveryFilter {
  if (!f) return {};
  if (f.forwardState !== undefined && f.forwardState !== "none" && !(DELIVERY_STATES as readonly string[]).includes(f.forwardState)) {
    throw validationFailed("filter.forward_state", "unknown");
  }
  if (f.destinationId !== undefined) requireUuid("filter.destination_id", f.destinationId);
  const filter: RedeliveryFilter = {
    fromMs: optionalNumber(f.fromMs),
    toMs: optionalNumber(f.toMs),
    eventType: f.eventType,
    provider: f.provider,
    responseCode: f.responseCode,
    verification: f.verification,
    forwardState: f.forwardState,
    destinationId: f.destinationId?.toLowerCase(),
    schemaDrift: f.schemaDrift,
  };
  // Only the fields given: stored and shown as the caller wrote them.
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as RedeliveryFilter;
}

export function redeliveryFilterToProto(f: RedeliveryFilter): Omit<RedeliveryFilterProto, "$typeName"> {
  return {
    ...(f.fromMs !== undefined ? { fromMs: BigInt(f.fromMs) } : {}),
    ...(f.toMs !== undefined ? { toMs: BigInt(f.toMs) } : {}),
    ...(f.eventType !== undefined ? { eventType: f.eventType } : {}),
    ...(f.provider !== undefined ? { provider: f.provider } : {}),
    ...(f.responseCode !== undefined ? { responseCode: f.responseCode } : {}),
    ...(f.verification !== undefined ? { verification: f.verification } : {}),
    ...(f.forwardState !== undefined ? { forwardState: f.forwardState } : {}),
    ...(f.destinationId !== undefined ? { destinationId: f.destinationId } : {}),
    ...(f.schemaDrift !== undefined ? { schemaDrift: f.schemaDrift } : {}),
  };
}

export function redeliveryJobToProto(j: RedeliveryJobRecord): Omit<RedeliveryJob, "$typeName" | "filter"> & { filter: ReturnType<typeof redeliveryFilterToProto> } {
  return {
    id: j.id,
    accountId: j.accountId,
    endpointId: j.endpointId,
    filter: redeliveryFilterToProto(j.filter),
    state: j.state,
    total: BigInt(j.total),
    queued: BigInt(j.queued),
    done: BigInt(j.done),
    failed: BigInt(j.failed),
    walked: j.walked,
    createdAtMs: BigInt(j.createdAt),
    updatedAtMs: BigInt(j.updatedAt),
    ...(j.finishedAt !== undefined ? { finishedAtMs: BigInt(j.finishedAt) } : {}),
    createdByKeyId: j.createdByKeyId,
    createdByKeyPrefix: j.createdByKeyPrefix,
  };
}

function refOf(req: { accountId: string; endpointId: string }): { accountId: string; endpointId: string } {
  if (!req.accountId) throw validationFailed("account_id", "required");
  requireUuid("endpoint_id", req.endpointId);
  return { accountId: req.accountId, endpointId: req.endpointId.toLowerCase() };
}

function jobIdOf(jobId: string): string {
  if (!isUuid(jobId)) throw validationFailed("job_id", "format");
  return jobId.toLowerCase();
}

function leaseOf(leaseMs: bigint): number {
  const ms = Number(leaseMs);
  if (ms < 1 || ms > MAX_LEASE_MS) throw validationFailed("lease_ms", "range");
  return ms;
}

/** Bulk redelivery (design §18; ADR 0089): the gateway's count, start, read and cancel, and the replay runner's lease and pages. */
export function redeliveryMethods(
  store: CatalogStore,
  now: () => number,
  limits: RedeliveryLimits = REDELIVERY_LIMITS,
): Pick<
  ServiceImpl<typeof CatalogService>,
  | "countRedeliveries"
  | "createRedeliveryJob"
  | "getRedeliveryJob"
  | "listRedeliveryJobs"
  | "cancelRedeliveryJob"
  | "claimRedeliveryJob"
  | "runRedeliveryPage"
  | "releaseRedeliveryJob"
> {
  const job = (j: RedeliveryJobRecord | undefined) => (j ? { job: redeliveryJobToProto(j) } : {});
  return {
    async countRedeliveries(req) {
      const ref = refOf(req);
      return { count: BigInt(await store.countRedeliveries(ref.accountId, ref.endpointId, redeliveryFilterOf(req.filter))) };
    },

    async createRedeliveryJob(req) {
      const ref = refOf(req);
      if (!req.audit) throw validationFailed("audit", "required");
      requireUuid("audit.key_id", req.audit.keyId);
      const at = now();
      const id = newId();
      const audit = auditEntryOf(req.audit, { ...ref, action: "redelivery.started", at, details: { jobId: id } });
      const created = await store.createRedeliveryJob(
        { id, ...ref, filter: redeliveryFilterOf(req.filter), createdAt: at, createdByKeyId: req.audit.keyId.toLowerCase(), createdByKeyPrefix: req.audit.keyPrefix },
        limits,
        audit,
      );
      return job(created);
    },

    async getRedeliveryJob(req) {
      const ref = refOf(req);
      const found = await store.getRedeliveryJob(ref.accountId, ref.endpointId, jobIdOf(req.jobId));
      if (!found) throw notFound("redelivery job");
      return job(found);
    },

    async listRedeliveryJobs(req) {
      const ref = refOf(req);
      if (!(await store.getEndpoint(ref.endpointId, ref.accountId))) throw notFound("endpoint");
      return { jobs: (await store.listRedeliveryJobs(ref.accountId, ref.endpointId, REDELIVERY_LIMITS.listed)).map(redeliveryJobToProto) };
    },

    async cancelRedeliveryJob(req) {
      const ref = refOf(req);
      const jobId = jobIdOf(req.jobId);
      const at = now();
      const audit = auditEntryOf(req.audit, { ...ref, action: "redelivery.canceled", at, details: { jobId } });
      const canceled = await store.cancelRedeliveryJob(ref.accountId, ref.endpointId, jobId, at, audit);
      if (!canceled) throw notFound("redelivery job");
      return job(canceled);
    },

    async claimRedeliveryJob(req) {
      if (!req.owner) throw validationFailed("owner", "required");
      return job(await store.claimRedeliveryJob(req.owner, now(), leaseOf(req.leaseMs)));
    },

    async runRedeliveryPage(req) {
      if (!req.owner) throw validationFailed("owner", "required");
      if (req.limit < 0 || req.limit > MAX_REDELIVERY_PAGE) throw validationFailed("limit", "range");
      return job(await store.runRedeliveryPage(jobIdOf(req.jobId), req.owner, now(), req.limit, leaseOf(req.leaseMs)));
    },

    async releaseRedeliveryJob(req) {
      if (!req.owner) throw validationFailed("owner", "required");
      const after = Number(req.afterMs);
      if (after < 0 || after > MAX_LEASE_MS) throw validationFailed("after_ms", "range");
      return { released: await store.releaseRedeliveryJob(jobIdOf(req.jobId), req.owner, now() + after) };
    },
  };
}
