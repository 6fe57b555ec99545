import type { Client } from "@connectrpc/connect";
import type { CryptoService } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { open, seal } from "./aead.js";
import { createBlindIndexer, type BlindIndexer } from "./blind-index.js";

export interface SealedBodyParts {
  ciphertext: Uint8Array;
  wrappedKey: Uint8Array;
  keyId: string;
}

export interface SealerOptions {
  /** How long one data key seals bodies before a fresh one is asked for. */
  maxAgeMs: number;
  /** How many bodies one data key seals at most (well under GCM's random-nonce bound). */
  maxUses: number;
  now?: () => number;
}

interface CachedKey {
  plaintext: Buffer;
  wrapped: Uint8Array;
  keyId: string;
  issuedAt: number;
  uses: number;
}

function aadOf(endpointId: string): Buffer {
  return Buffer.from(endpointId, "utf8");
}

/**
 * Ingest's side of envelope encryption: one crypto call per data key, not per body. The
 * ciphertext is bound to its endpoint (AAD), so it cannot be moved to another endpoint.
 */
export function createEnvelopeSealer(crypto: Client<typeof CryptoService>, options: SealerOptions) {
  const now = options.now ?? Date.now;
  let current: CachedKey | undefined;
  let pending: Promise<CachedKey> | undefined;

  async function fresh(): Promise<CachedKey> {
    pending ??= crypto
      .issueDataKey({})
      .then((r) => ({
        plaintext: Buffer.from(r.plaintextKey),
        wrapped: r.wrappedKey,
        keyId: r.keyId,
        issuedAt: now(),
        uses: 0,
      }))
      .finally(() => {
        pending = undefined;
      });
    current = await pending;
    return current;
  }

  const usable = (key: CachedKey | undefined): key is CachedKey =>
    key !== undefined && key.uses < options.maxUses && now() - key.issuedAt < options.maxAgeMs;
  const sealWith = (key: CachedKey, endpointId: string, plaintext: Uint8Array): SealedBodyParts => {
    key.uses += 1;
    return { ciphertext: seal(key.plaintext, plaintext, aadOf(endpointId)), wrappedKey: key.wrapped, keyId: key.keyId };
  };

  return {
    async seal(endpointId: string, plaintext: Uint8Array): Promise<SealedBodyParts> {
      return sealWith(usable(current) ? current : await fresh(), endpointId, plaintext);
    },
    /** Seals at once when a usable data key is at hand; undefined means: call seal(). */
    sealNow(endpointId: string, plaintext: Uint8Array): SealedBodyParts | undefined {
      return usable(current) ? sealWith(current, endpointId, plaintext) : undefined;
    },
    /** Whether a data key is at hand (health): sealing needs no crypto call right now. */
    ready(): boolean {
      return current !== undefined && now() - current.issuedAt < options.maxAgeMs;
    },
  };
}

export type EnvelopeSealer = ReturnType<typeof createEnvelopeSealer>;

export type OpenResult = { ok: true; plaintext: Buffer } | { ok: false; reason: "key_unavailable" | "tampered" };

/**
 * The readers' side (gateway, replay): unwrapped data keys are cached by their wrapped
 * bytes for a bounded time. A key the ring no longer holds, or a body that fails its tag,
 * is a per-event `failed`, never an error of the whole request; a crypto outage is.
 */
export function createEnvelopeOpener(
  crypto: Client<typeof CryptoService>,
  options: { maxAgeMs: number; maxEntries: number; now?: () => number },
) {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { key: Buffer; at: number }>();

  async function dataKeyOf(wrapped: Uint8Array): Promise<Buffer | undefined> {
    const id = Buffer.from(wrapped).toString("base64");
    const hit = cache.get(id);
    if (hit && now() - hit.at < options.maxAgeMs) return hit.key;
    try {
      const r = await crypto.unwrapDataKey({ wrappedKey: wrapped });
      const key = Buffer.from(r.plaintextKey);
      if (cache.size >= options.maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(id, { key, at: now() });
      return key;
    } catch (err) {
      if (AppError.is(err) && err.reason === "not_found") return undefined;
      throw err;
    }
  }

  return {
    async open(endpointId: string, body: SealedBodyParts): Promise<OpenResult> {
      const key = await dataKeyOf(body.wrappedKey);
      if (!key) return { ok: false, reason: "key_unavailable" };
      try {
        return { ok: true, plaintext: open(key, body.ciphertext, aadOf(endpointId)) };
      } catch {
        return { ok: false, reason: "tampered" };
      }
    },
  };
}

export type EnvelopeOpener = ReturnType<typeof createEnvelopeOpener>;

/**
 * The blind indexer, built on the key fetched once from crypto and kept; a failed fetch is
 * retried next time.
 */
export function createBlindIndexSource(crypto: Client<typeof CryptoService>): BlindIndexSource {
  let indexer: Promise<BlindIndexer> | undefined;
  let ready: BlindIndexer | undefined;
  const get = () =>
    (indexer ??= crypto.getBlindIndexKey({}).then(
      (r) => (ready = createBlindIndexer(Buffer.from(r.key))),
      (err: unknown) => {
        indexer = undefined;
        throw err;
      },
    ));
  return Object.assign(get, { current: () => ready });
}

/** The blind indexer once its key is fetched; `current()` gives it without waiting, if it is. */
export type BlindIndexSource = (() => Promise<BlindIndexer>) & { current(): BlindIndexer | undefined };
