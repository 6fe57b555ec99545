import type { Client } from "@connectrpc/connect";
import type { CryptoService, ReplayService } from "@whc/contracts";
import { isForwardingMode, type ForwardSettings } from "@whc/api-model";
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

/** Refuses a destination the egress guard would not send to, as a replay target is refused. */
export async function vetForwardTarget(replay: Client<typeof ReplayService>, url: string): Promise<void> {
  const verdict = await replay.checkForwardTarget({ url });
  if (!verdict.allowed) {
    throw new AppError("target_not_allowed", `forward target refused: ${verdict.reason} (${verdict.category})`);
  }
}

export async function sealTargetSecret(crypto: Client<typeof CryptoService>, secret: string): Promise<Uint8Array> {
  return (await crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed;
}

/** The patch fields for `forward` as PATCH takes it: replaced, secret kept when left out, or removed with its secret. */
export async function forwardPatch(
  deps: { replay: Client<typeof ReplayService>; crypto: Client<typeof CryptoService> },
  forward: ForwardSettings | null | undefined,
): Promise<{ forwardJson?: string; sealedTargetSecret?: Uint8Array; clearTargetSecret?: boolean }> {
  if (forward === undefined) return {};
  if (forward === null) return { forwardJson: "" };
  await vetForwardTarget(deps.replay, forward.url);
  const { targetSecret } = forward;
  return {
    forwardJson: storedForwardJson(forward),
    ...(typeof targetSecret === "string" ? { sealedTargetSecret: await sealTargetSecret(deps.crypto, targetSecret) } : {}),
    ...(targetSecret === null ? { clearTargetSecret: true } : {}),
  };
}
