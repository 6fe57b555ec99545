import type { HeaderPair } from "./headers.js";
import { providerScheme, providerSamples, type Provider } from "./registry.js";
import { sampleBodyBytes, sampleContext, type JsonValue, type SampleBody } from "./sample.js";
import { applySet, type SetRefusal } from "./sample-set.js";
import { verifySignature } from "./verify.js";

export interface TriggerInput {
  provider: Provider;
  eventType: string;
  /** Fields to override: dotted paths into a JSON body, field names of a form body. */
  set?: Readonly<Record<string, JsonValue>>;
  /** The secret to sign with as the provider signs; absent: the sample goes out unsigned. */
  secret?: Uint8Array | undefined;
  /** The URL the request is sent to: Twilio, Square and HubSpot sign it. */
  url: string;
  nowMs?: number;
  /**
   * Verify what was signed with the same secret before handing it out: true where the secret is
   * the one the receiver verifies with (an endpoint's). A private key given to sign for Discord or
   * SendGrid does not verify as itself, so a caller signing with one leaves this off.
   */
  verifyWithSecret?: boolean;
}

export interface TriggerRequest {
  method: string;
  /** Content-Type first, then the provider's own headers, then its fresh signature headers. */
  headers: HeaderPair[];
  body: Buffer;
}

export type TriggerResult =
  | { ok: true; request: TriggerRequest }
  /** The provider has no samples (generic). */
  | { ok: false; reason: "no_samples" }
  | { ok: false; reason: "unknown_event_type"; known: string[] }
  | { ok: false; reason: "bad_set"; refused: SetRefusal }
  /**
   * With verifyWithSecret, what was signed does not verify with the same secret: a secret that
   * only verifies (Discord's and SendGrid's public keys) cannot make the provider's signature.
   */
  | { ok: false; reason: "cannot_sign" };

/** The sample event types of a provider, in the order its file lists them; [] for generic. */
export function sampleEventTypes(provider: Provider): string[] {
  return providerSamples[provider].samples.map((s) => s.eventType);
}

/** The headers a signature replaces are dropped from the sample's before the fresh ones go in. */
function signed(provider: Provider, headers: HeaderPair[], body: Buffer, secret: Uint8Array, url: string, nowMs: number): HeaderPair[] {
  const scheme = providerScheme(provider);
  const drop = new Set(scheme.signedHeaderNames({}));
  const fresh = scheme.sign({ secret, body, nowMs, url, headers });
  return [...headers.filter(([name]) => !drop.has(name.toLowerCase())), ...fresh];
}

/**
 * A sample of the provider's event, with `set` written into it and signed as the provider signs
 * with `secret` at `nowMs` (fresh ids and timestamps each time), ready to send to `url`.
 */
export function buildTrigger(input: TriggerInput): TriggerResult {
  const { provider, eventType, secret, url } = input;
  const { samples, signBody } = providerSamples[provider];
  if (samples.length === 0) return { ok: false, reason: "no_samples" };
  const sample = samples.find((s) => s.eventType === eventType);
  if (!sample) return { ok: false, reason: "unknown_event_type", known: samples.map((s) => s.eventType) };
  const nowMs = input.nowMs ?? Date.now();
  const ctx = sampleContext(nowMs);
  const built = sample.build(ctx);
  const overridden = applySet(built.body, input.set ?? {});
  if ("refused" in overridden) return { ok: false, reason: "bad_set", refused: overridden.refused };
  let bodyValue: SampleBody = overridden.body;
  if (secret && signBody) bodyValue = signBody(bodyValue, secret, ctx);
  const body = sampleBodyBytes(bodyValue);
  const base: HeaderPair[] = [["Content-Type", built.contentType], ...built.headers];
  const headers = secret ? signed(provider, base, body, secret, url, nowMs) : base;
  if (secret && input.verifyWithSecret) {
    const outcome = verifySignature({ provider, headers, body, secret, url, nowMs });
    if (outcome.verification !== "verified") return { ok: false, reason: "cannot_sign" };
  }
  return { ok: true, request: { method: built.method, headers, body } };
}
