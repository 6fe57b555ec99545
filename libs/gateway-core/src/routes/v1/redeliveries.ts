import { REDELIVERY_LIMITS, redeliveryJob, redeliveryJobList, redeliveryRequest, type RedeliveryCountJson, type RedeliveryJobJson, type RedeliveryJobListJson } from "@whc/api-model";
import { redeliveryFilterProto, redeliveryJobJson } from "@whc/api-model/present";
import { AppError, validationFailed } from "@whc/errors";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { auditContext } from "../../audit.js";

const CATALOG_FIELDS: Record<string, string> = { "filter.forward_state": "filter.forwardState", "filter.destination_id": "filter.destinationId" };

/** The catalog names its own fields; /v1 names the request's. */
function requestField(err: unknown): never {
  if (AppError.is(err) && err.reason === "validation_failed" && err.field && CATALOG_FIELDS[err.field]) {
    throw validationFailed(CATALOG_FIELDS[err.field]!, err.fieldReason ?? "format", err.message);
  }
  throw err;
}

/** Bulk redelivery (design §18; ADR 0089): count, start, follow and cancel jobs. */
export function redeliveryRoutes(deps: GatewayDeps): Route[] {
  const { catalog } = deps;
  const jobPath = "/v1/endpoints/{endpointId}/redeliveries/{jobId}";
  return [
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/redeliveries",
      scope: "events:replay",
      operationId: "startRedelivery",
      summary: "Redeliver many events (a bulk job), or count what it would redo",
      description:
        "Puts back in the relay outbox every delivery of the endpoint's events that `filter` takes (the event list's " +
        "filters: `from`, `to`, `eventType`, `provider`, `responseCode`, `status`, `forwardState`, `destinationId`, " +
        "`schemaDrift`): each delivery to one of the endpoint's destinations (only `destinationId`'s when given) that " +
        "ended `delivered`, `failed`, `exhausted` or `skipped` goes again, as trigger `bulk`, with a fresh attempt budget, " +
        "through the outbox (and so through its destination's rate limit and breaker). Deliveries still pending or held are " +
        "left as they are; duplicates are never sent.\n\n" +
        "With `dryRun: true` the answer is 200 `{\"count\"}`, the number of deliveries a job would redo now, and nothing " +
        "starts. Without it the answer is 202 with the job: it runs in the replay service, a page of events at a time, " +
        "and survives restarts; follow it with `GET .../redeliveries/{jobId}`. The job walks the events received up to " +
        "its start, oldest first; `total` is what it counted then.\n\n" +
        `Errors: 409 \`forward_not_configured\` when the endpoint has no destination (or not \`destinationId\`); 429 ` +
        `\`quota_exceeded\` when the account already runs ${REDELIVERY_LIMITS.runningPerAccount} jobs (\`details.quota\` ` +
        "`redelivery_jobs`, `WHC_QUOTA_REDELIVERY_JOBS`) or the filter takes more deliveries than a job may redo " +
        `(\`redelivery_deliveries\`, ${REDELIVERY_LIMITS.deliveriesPerJob} by default, \`WHC_REDELIVERY_MAX_DELIVERIES\`: narrow it with ` +
        "`from`/`to`); 400 `validation_failed` for an unknown or malformed filter field.",
      tags: ["forwarding"],
      extension: true,
      body: redeliveryRequest,
      success: { status: 202, schema: redeliveryJob, description: "The job, started (`running`; `done` at once when it has nothing to redo)." },
      otherResponses: {
        "200": { description: "dryRun: how many deliveries a job would redo now.", content: { "application/json": { schema: { $ref: "#/components/schemas/RedeliveryCount" } } } },
      },
      errors: [400, 409, 413, 415, 429],
      async handler(ctx, { auth, params, body }): Promise<RedeliveryJobJson | RedeliveryCountJson> {
        const ref = { accountId: auth.accountId, endpointId: params.endpointId! };
        const filter = redeliveryFilterProto(body.filter);
        if (body.dryRun) {
          ctx.status = 200;
          const { count } = await catalog.countRedeliveries({ ...ref, filter }).catch(requestField);
          return { count: Number(count) };
        }
        const audit = auditContext(ctx, auth, { filter: body.filter ?? {} });
        const { job } = await catalog.createRedeliveryJob({ ...ref, filter, audit }).catch(requestField);
        return redeliveryJobJson(job!);
      },
    }),
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/redeliveries",
      scope: "events:replay",
      operationId: "listRedeliveries",
      summary: "List an endpoint's bulk redelivery jobs",
      description: `The endpoint's jobs, newest first (the ${REDELIVERY_LIMITS.listed} newest); finished ones are kept as long as events are (\`WHC_RETENTION_DAYS\`).`,
      tags: ["forwarding"],
      extension: true,
      success: { status: 200, schema: redeliveryJobList, description: "Newest first." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<RedeliveryJobListJson> {
        const { jobs } = await catalog.listRedeliveryJobs({ accountId: auth.accountId, endpointId: params.endpointId! });
        return { items: jobs.map(redeliveryJobJson) };
      },
    }),
    route({
      method: "GET",
      path: jobPath,
      scope: "events:replay",
      operationId: "getRedelivery",
      summary: "Get a bulk redelivery job",
      description:
        "Where the job stands: `queued` deliveries put back so far, `done` and `failed` of them ended (delivered or " +
        "skipped; failed or exhausted), `state` `running` until every one it put back ended, then `done`.",
      tags: ["forwarding"],
      extension: true,
      success: { status: 200, schema: redeliveryJob, description: "The job." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<RedeliveryJobJson> {
        const { job } = await catalog.getRedeliveryJob({ accountId: auth.accountId, endpointId: params.endpointId!, jobId: params.jobId! });
        return redeliveryJobJson(job!);
      },
    }),
    route({
      method: "POST",
      path: `${jobPath}/cancel`,
      scope: "events:replay",
      operationId: "cancelRedelivery",
      summary: "Cancel a bulk redelivery job",
      description:
        "Stops a running job's walk where it is (`canceled`; `total` becomes what it put back). Deliveries it already put " +
        "back still go, and still count as they end. A job that is not running is answered as it is.",
      tags: ["forwarding"],
      extension: true,
      success: { status: 200, schema: redeliveryJob, description: "The job, canceled." },
      errors: [400],
      async handler(ctx, { auth, params }): Promise<RedeliveryJobJson> {
        const { job } = await catalog.cancelRedeliveryJob({
          accountId: auth.accountId,
          endpointId: params.endpointId!,
          jobId: params.jobId!,
          audit: auditContext(ctx, auth),
        });
        return redeliveryJobJson(job!);
      },
    }),
  ];
}
