import { create } from "@bufbuild/protobuf";
import type { Context } from "koa";
import { AuditContextSchema, type AuditContext } from "@whc/contracts";
import type { AuditAction } from "@whc/api-model";
import type { AuthState } from "./middleware/auth.js";
import type { GatewayDeps } from "./deps.js";

/** The socket peer, an IPv4 address written as IPv6 (`::ffff:192.0.2.1`) in its short form. */
function remoteIpOf(ctx: Context): string {
  const address = ctx.req.socket.remoteAddress ?? "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/**
 * Who acts, for the audit log (design §15, ADR 0053): the calling key, the request's address
 * and id, and what the route adds to the entry's details (never a body or a secret). The
 * catalog call that carries it writes the entry with its action.
 */
export function auditContext(ctx: Context, auth: AuthState, details?: Record<string, unknown>, action?: AuditAction): AuditContext {
  return create(AuditContextSchema, {
    keyId: auth.keyId,
    keyPrefix: auth.keyPrefix,
    remoteIp: remoteIpOf(ctx),
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
