import type { Client } from "@connectrpc/connect";
import type { ReplayService } from "@whc/contracts";
import { isForwardingMode, type Warning } from "@whc/api-model";
import { refusalReason } from "@whc/egress-guard";
import { AppError, validationFailed } from "@whc/errors";

/**
 * A destination's URL on its way to the catalog (design §11, §14): vetted by replay's egress
 * guard as a replay target is. The destinations themselves: destination-settings.ts.
 */

/** relay and proxy forward, so they need a destination: refused as the missing field `forward` (or `destinations`). */
export function requireForwardFor(operatingMode: string, hasForward: boolean): void {
  if (!hasForward && isForwardingMode(operatingMode)) {
    throw validationFailed("forward", "required", `operatingMode ${operatingMode} needs forward`);
  }
}

/** Whether `url` is one of the deployment's own webhook URLs: the public base's origin, under its `/h/`. */
export function isOwnWebhookUrl(url: string, ingestPublicUrl: string): boolean {
  let target: URL;
  let own: URL;
  try {
    target = new URL(url);
    own = new URL(ingestPublicUrl);
  } catch {
    return false;
  }
  const base = own.pathname.replace(/\/+$/, "");
  return target.origin === own.origin && target.pathname.toLowerCase().startsWith(`${base}/h/`);
}

/**
 * Vets a destination when it is saved (design §11, §14): one of the deployment's own webhook
 * URLs is a loop (validation_failed, reason loop); what the egress guard would not send to is
 * refused as a replay target is (target_not_allowed with its reason); a host name that does
 * not resolve now is saved, with a `dns_failure` warning (DNS may be fixed before the first
 * send, and every send vets again).
 */
export async function vetForwardTarget(replay: Client<typeof ReplayService>, url: string, ingestPublicUrl: string, field = "forward.url"): Promise<Warning[]> {
  if (isOwnWebhookUrl(url, ingestPublicUrl)) {
    throw validationFailed(field, "loop", `${field} is one of this deployment's webhook URLs`);
  }
  const verdict = await replay.checkForwardTarget({ url });
  if (verdict.allowed) return [];
  if (verdict.reason === "dns_failure") {
    return [{ code: "dns_failure", message: `${field}'s host does not resolve now; every delivery looks it up again.` }];
  }
  const reason = refusalReason(verdict);
  if (!reason) throw validationFailed(field, "format");
  throw new AppError("target_not_allowed", `forward target refused: ${verdict.reason} (${verdict.category})`, { meta: { reason } });
}
