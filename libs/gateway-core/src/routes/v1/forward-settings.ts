import type { Client } from "@connectrpc/connect";
import type { CryptoService, ReplayService } from "@whc/contracts";
import { isForwardingMode, type ForwardSettings, type Warning } from "@whc/api-model";
import { refusalReason } from "@whc/egress-guard";
import { AppError, validationFailed } from "@whc/errors";

/**
 * The endpoint's `forward` settings on their way to the catalog (design §11): the URL vetted
 * by replay's egress guard as a replay target is, the target secret sealed as the endpoint's
 * `secret` is, the rest kept as JSON without the secret.
 */

/** What the catalog keeps as forward_json: the settings with their defaults, no secret. */
export function storedForwardJson(f: ForwardSettings): string {
  return JSON.stringify({ url: f.url, keepPath: f.keepPath, timeoutMs: f.timeoutMs, maxAttempts: f.maxAttempts });
}

/** relay and proxy forward, so they need the settings: refused as the missing field `forward`. */
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
export async function vetForwardTarget(replay: Client<typeof ReplayService>, url: string, ingestPublicUrl: string): Promise<Warning[]> {
  if (isOwnWebhookUrl(url, ingestPublicUrl)) {
    throw validationFailed("forward.url", "loop", "forward.url is one of this deployment's webhook URLs");
  }
  const verdict = await replay.checkForwardTarget({ url });
  if (verdict.allowed) return [];
  if (verdict.reason === "dns_failure") {
    return [{ code: "dns_failure", message: `forward.url's host does not resolve now; every delivery looks it up again.` }];
  }
  const reason = refusalReason(verdict);
  if (!reason) throw validationFailed("forward.url", "format");
  throw new AppError("target_not_allowed", `forward target refused: ${verdict.reason} (${verdict.category})`, { meta: { reason } });
}

export async function sealTargetSecret(crypto: Client<typeof CryptoService>, secret: string): Promise<Uint8Array> {
  return (await crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed;
}

/** The patch fields for `forward` as PATCH takes it: replaced, secret kept when left out, or removed with its secret. */
export async function forwardPatch(
  deps: { replay: Client<typeof ReplayService>; crypto: Client<typeof CryptoService> },
  forward: ForwardSettings | null | undefined,
  ingestPublicUrl: string,
  warnings: Warning[],
): Promise<{ forwardJson?: string; sealedTargetSecret?: Uint8Array; clearTargetSecret?: boolean }> {
  if (forward === undefined) return {};
  if (forward === null) return { forwardJson: "" };
  warnings.push(...(await vetForwardTarget(deps.replay, forward.url, ingestPublicUrl)));
  const { targetSecret } = forward;
  return {
    forwardJson: storedForwardJson(forward),
    ...(typeof targetSecret === "string" ? { sealedTargetSecret: await sealTargetSecret(deps.crypto, targetSecret) } : {}),
    ...(targetSecret === null ? { clearTargetSecret: true } : {}),
  };
}
