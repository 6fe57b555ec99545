import { create } from "@bufbuild/protobuf";
import type { Context } from "koa";
import { AuditContextSchema, type AuditContext } from "@whc/contracts";
import type { AuditAction } from "@whc/api-model";
import { remoteIpOf } from "@whc/identity";
import type { AuthState } from "./middleware/auth.js";
import type { GatewayDeps } from "./deps.js";

/**
 * The caller's address: the socket peer (an IPv4 address written as IPv6 in its short form),
 * or, behind a proxy named in WHC_TRUSTED_PROXIES, the first address past the trusted ones in
 * X-Forwarded-For, as ingest reads a sender's.
 */
function callerIp(ctx: Context): string {
  return remoteIpOf(ctx.req, (ctx.state.trustedProxies as ReadonlySet<string> | undefined) ?? NO_PROXIES);
}

const NO_PROXIES: ReadonlySet<string> = new Set();

/**
 * Who acts, for the audit log (design §15, ADR 0053): the calling key, the request's address
 * and id, and what the route adds to the entry's details (never a body or a secret). The
 * catalog call that carries it writes the entry with its action.
 */
export function auditContext(ctx: Context, auth: AuthState, details?: Record<string, unknown>, action?: AuditAction): AuditContext {
  return create(AuditContextSchema, {
    keyId: auth.keyId,
    keyPrefix: auth.keyPrefix,
    remoteIp: callerIp(ctx),
    requestId: (ctx.state.requestId as string | undefined) ?? "",
    detailsJson: details ? JSON.stringify(details) : "",
    action: action ?? "",
  });
}

/**
 * Writes an entry by itself (RecordAudit), for an action the catalog does not make in one call:
 * a bulk export (its count known at its end) and a trigger (captured by ingest). It comes after
 * the action; a failure to write it is logged, since the action has taken place (ADR 0053).
 */
export async function recordAfter(
  deps: Pick<GatewayDeps, "catalog" | "logger">,
  ctx: Context,
  auth: AuthState,
  entry: { action: AuditAction; endpointId?: string; eventId?: string; details?: Record<string, unknown> },
): Promise<void> {
  try {
    await deps.catalog.recordAudit({
      accountId: auth.accountId,
      action: entry.action,
      endpointId: entry.endpointId ?? "",
      eventId: entry.eventId ?? "",
      context: auditContext(ctx, auth, entry.details),
    });
  } catch (err) {
    deps.logger.error({ err, action: entry.action, endpointId: entry.endpointId }, "audit entry not recorded");
  }
}
