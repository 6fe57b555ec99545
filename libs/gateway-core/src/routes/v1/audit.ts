import { CONFIG_APPLIED_SLUGS, auditList, configAppliedRequest, listAuditQuery, seesEndpoint, type AuditListJson } from "@whc/api-model";
import { auditEntryJson, isoTime } from "@whc/api-model/present";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { forbidden } from "../../scopes.js";
import { ms } from "./event-query.js";
import { auditContext } from "../../audit.js";

const cursor = (at: string | undefined, id: string | undefined) => (at && id ? { atMs: BigInt(ms(at)!), id: id.toLowerCase() } : undefined);

/** Each kind's count and its first slugs: an entry stays small however large the file. */
const kind = (slugs: readonly string[]) => ({ count: slugs.length, slugs: slugs.slice(0, CONFIG_APPLIED_SLUGS) });

/** `GET /v1/audit` and `POST /v1/audit/config-applied` (design §15; ADR 0053). */
export function auditRoutes(deps: GatewayDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/audit",
      scope: "audit:read",
      operationId: "listAudit",
      summary: "Read the audit log",
      description:
        "Who did what, newest first by (`at`, `id`): each entry names the action, the API key (`keyId`, `keyPrefix`), the " +
        "address and request id it came with, the endpoint and event it concerned, and `details` (never a body or a " +
        "secret). Recorded: endpoints created, updated and deleted; an event's detail read (it holds the body), deleted, " +
        "exported as cURL (`unmasked`) or in bulk (`count`), replayed (`audit_id`), redelivered, triggered; keys created " +
        "and revoked. Lists are not recorded. Entries are kept `WHC_AUDIT_RETENTION_DAYS` (365).\n\n" +
        "Pages and filters as the event list does: `before`/`beforeId` to older entries (`nextBefore`/`nextBeforeId`), " +
        "`after`/`afterId` for newer ones (`nextAfter`/`nextAfterId`), `limit` 1-200 (50); `action`, `keyId`, `endpointId`, " +
        "`eventId` (an event's history), `from` (inclusive) and `to` (exclusive) combine.\n\n" +
        "A key restricted to endpoints reads only the entries of one of them: it must give `endpointId` (else 403 " +
        "`forbidden`, `details.field: endpointId`), and an endpoint it does not see has no entries, as an unknown id.",
      tags: ["audit"],
      extension: true,
      query: listAuditQuery,
      success: { status: 200, schema: auditList, description: "Newest first by (at, id)." },
      errors: [400],
      async handler(_ctx, { auth, query: q }): Promise<AuditListJson> {
        const endpointId = q.endpointId?.toLowerCase();
        if (auth.endpointIds.length > 0 && endpointId === undefined) throw forbidden(undefined, "endpointId");
        const hidden = endpointId !== undefined && !seesEndpoint(auth.endpointIds, endpointId);
        const before = cursor(q.before, q.beforeId);
        const after = cursor(q.after, q.afterId);
        const page = hidden
          ? { entries: [], hasOlder: false }
          : await deps.catalog.listAudit({
              accountId: auth.accountId,
              ...(before ? { before } : {}),
              ...(after ? { after } : {}),
              fromMs: q.from === undefined ? undefined : BigInt(ms(q.from)!),
              toMs: q.to === undefined ? undefined : BigInt(ms(q.to)!),
              action: q.action,
              keyId: q.keyId?.toLowerCase(),
              endpointId,
              eventId: q.eventId?.toLowerCase(),
              limit: q.limit ?? 50,
            });
        const newest = page.entries[0];
        const oldest = page.entries.at(-1);
        return {
          items: page.entries.map(auditEntryJson),
          ...(page.hasOlder && oldest ? { nextBefore: isoTime(oldest.atMs), nextBeforeId: oldest.id } : {}),
          ...(newest ? { nextAfter: isoTime(newest.atMs), nextAfterId: newest.id } : after ? { nextAfter: q.after!, nextAfterId: q.afterId!.toLowerCase() } : {}),
        };
      },
    }),
    route({
      method: "POST",
      path: "/v1/audit/config-applied",
      scope: "endpoints:write",
      operationId: "recordConfigApplied",
      summary: "Record a configuration applied",
      description:
        "Records one `config.applied` entry for a run of `whc apply` (design §15, §16): the file's SHA-256, how many changes " +
        "the plan held and how many were made, and the counts and first " + String(CONFIG_APPLIED_SLUGS) + " slugs of the " +
        "endpoints created, updated and deleted. whc sends it at the end of every run that changed something, also one " +
        "a refusal stopped (`applied` < `total`); each change has its own endpoint entry besides.",
      tags: ["audit"],
      extension: true,
      body: configAppliedRequest,
      bodyRequired: true,
      success: { status: 204, description: "Recorded." },
      errors: [400],
      async handler(ctx, { auth, body }) {
        const details = {
          sha256: body.sha256,
          total: body.total,
          applied: body.applied,
          complete: body.applied === body.total,
          created: kind(body.created),
          updated: kind(body.updated),
          deleted: kind(body.deleted),
        };
        await deps.catalog.recordAudit({ accountId: auth.accountId, action: "config.applied", endpointId: "", eventId: "", context: auditContext(ctx, auth, details) });
      },
    }),
  ];
}
