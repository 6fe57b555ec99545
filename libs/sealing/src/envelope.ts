import type { Client } from "@connectrpc/connect";
import type { CryptoService } from "@whc/contracts";
import { createHmac } from "node:crypto";
import { AppError } from "@whc/errors";
import { open, seal, sealJoined } from "./aead.js";
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

/**
 * What a sealed value is: a captured body, the packed headers, sub-path and query of its
 * request, both joined (a capture with a body, ADR 0092), or a URL that may carry that
 * sub-path and query (a forward's target or attempt).
 */
export type SealedPart = "body" | "request" | "capture" | "url";

/**
 * A capture's `sealedRequest` when its request is sealed inside its body's ciphertext (ADR
 * 0092): one byte, where a request sealed alone is at least 28 (nonce and tag). The event
 * keeps its data key beside it, for the URLs sealed under the same key.
 */
export const SEALED_WITH_BODY: Uint8Array = Uint8Array.of(1);

/** Whether a stored capture's request is sealed with its body (SEALED_WITH_BODY). */
export function sealedWithBody(sealedRequest: Uint8Array | undefined): boolean {
  return sealedRequest !== undefined && sealedRequest.length === 1 && sealedRequest[0] === 1;
}

/**
 * The associated data of a sealed value: its endpoint, so it cannot be moved to another one,
 * and, for anything but a body (whose AAD predates the others), what it is, so a request's
 * ciphertext cannot be read as a body or the other way round.
 */
function aadOf(endpointId: string, part: SealedPart = "body"): Buffer {
  return Buffer.from(part === "body" ? endpointId : `${endpointId}\0${part}`, "utf8");
}

/**
 * What of a capture is sealed: its packed request always, its body when one is stored, the
 * targets of its deliveries (one per destination it goes to) when it has any.
 */
export interface CaptureParts {
  request: Uint8Array;
  body?: Uint8Array | undefined;
  forwardTargets?: readonly string[] | undefined;
}

/** A capture sealed under one data key; the targets as sealed text (sealedText), in their order. */
export interface SealedCapture {
  request: SealedBodyParts;
  body: SealedBodyParts | undefined;
  forwardTargets: string[];
}

/**
 * Sealed bytes kept where the store has a text field (a forward's target, an attempt's URL):
 * this prefix, then base64url. Such a field holds either this or a URL, which never starts so.
 */
export const SEALED_TEXT_PREFIX = "whc-sealed:";

export function sealedText(ciphertext: Uint8Array): string {
  return SEALED_TEXT_PREFIX + Buffer.from(ciphertext).toString("base64url");
}

/** The sealed bytes of a sealedText; undefined for any other text. */
export function sealedTextBytes(text: string): Buffer | undefined {
  return text.startsWith(SEALED_TEXT_PREFIX) ? Buffer.from(text.slice(SEALED_TEXT_PREFIX.length), "base64url") : undefined;
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
  const sealWith = (key: CachedKey, endpointId: string, plaintext: Uint8Array, part?: SealedPart): SealedBodyParts => {
    key.uses += 1;
    return { ciphertext: seal(key.plaintext, plaintext, aadOf(endpointId, part)), wrappedKey: key.wrapped, keyId: key.keyId };
  };
  /**
   * Every part under the one key at hand: a reader unwraps one data key per event. With a body,
   * the request and the body are one AES-GCM operation (ADR 0092: a cipher's set-up and its tag
   * cost more than sealing 2 KB), the request's place holding SEALED_WITH_BODY; without one
   * (metadata only), the request is sealed alone.
   */
  const sealCaptureWith = (key: CachedKey, endpointId: string, parts: CaptureParts): SealedCapture => {
    const forwardTargets = parts.forwardTargets?.length ? parts.forwardTargets.map((t) => sealedText(sealWith(key, endpointId, Buffer.from(t, "utf8"), "url").ciphertext)) : [];
    if (parts.body === undefined) return { request: sealWith(key, endpointId, parts.request, "request"), body: undefined, forwardTargets };
    key.uses += 1;
    return {
      request: { ciphertext: SEALED_WITH_BODY, wrappedKey: key.wrapped, keyId: key.keyId },
      body: { ciphertext: sealJoined(key.plaintext, parts.request, parts.body, aadOf(endpointId, "capture")), wrappedKey: key.wrapped, keyId: key.keyId },
      forwardTargets,
    };
  };

  return {
    async seal(endpointId: string, plaintext: Uint8Array): Promise<SealedBodyParts> {
      return sealWith(usable(current) ? current : await fresh(), endpointId, plaintext);
    },
    /** Seals at once when a usable data key is at hand; undefined means: call seal(). */
    sealNow(endpointId: string, plaintext: Uint8Array): SealedBodyParts | undefined {
      return usable(current) ? sealWith(current, endpointId, plaintext) : undefined;
    },
    /**
     * A capture's packed request (request-envelope.ts), its body unless only metadata is
     * stored, and its deliveries' targets, each with its own nonce under the same data key.
     */
    async sealCapture(endpointId: string, parts: CaptureParts): Promise<SealedCapture> {
      return sealCaptureWith(usable(current) ? current : await fresh(), endpointId, parts);
    },
    /** sealCapture at once when a usable data key is at hand; undefined means: call sealCapture(). */
    sealCaptureNow(endpointId: string, parts: CaptureParts): SealedCapture | undefined {
      return usable(current) ? sealCaptureWith(current, endpointId, parts) : undefined;
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
    /** A sealed body, or with `part` "request" a capture's sealed request. */
    async open(endpointId: string, body: SealedBodyParts, part: SealedPart = "body"): Promise<OpenResult> {
      const key = await dataKeyOf(body.wrappedKey);
      if (!key) return { ok: false, reason: "key_unavailable" };
      try {
        return { ok: true, plaintext: open(key, body.ciphertext, aadOf(endpointId, part)) };
      } catch {
        return { ok: false, reason: "tampered" };
      }
    },
    /**
     * Seals more under a stored value's data key (a forward's URLs under their capture's key):
     * undefined when that key has left the ring.
     */
    async sealUnder(endpointId: string, under: Pick<SealedBodyParts, "wrappedKey">, plaintext: Uint8Array, part: SealedPart): Promise<Buffer | undefined> {
      const key = await dataKeyOf(under.wrappedKey);
      return key && seal(key, plaintext, aadOf(endpointId, part));
    },
  };
}

export type EnvelopeOpener = ReturnType<typeof createEnvelopeOpener>;

/**
 * The blind indexer, built on the key fetched once from crypto and kept; a failed fetch is
 * retried next time. Deduplication's keyed hash (ADR 0083) is derived from the same key.
 */
export function createBlindIndexSource(crypto: Client<typeof CryptoService>): BlindIndexSource {
  let indexer: Promise<BlindIndexer> | undefined;
  let ready: BlindIndexer | undefined;
  let hasher: DedupeHasher | undefined;
  const get = () =>
    (indexer ??= crypto.getBlindIndexKey({}).then(
      (r) => {
        hasher = createDedupeHasher(r.key);
        return (ready = createBlindIndexer(Buffer.from(r.key)));
      },
      (err: unknown) => {
        indexer = undefined;
        throw err;
      },
    ));
  return Object.assign(get, { current: () => ready, dedupeHasher: () => hasher });
}

/**
 * The blind indexer once its key is fetched; `current()` gives it without waiting, if it is, and
 * `dedupeHasher()` deduplication's keyed hash the same way (after `()` has resolved, always).
 */
export type BlindIndexSource = (() => Promise<BlindIndexer>) & { current(): BlindIndexer | undefined; dedupeHasher(): DedupeHasher | undefined };

/**
 * A capture's deduplication key (its provider's id, or its fields' values, as `material`) as the
 * catalog stores it (design §17, ADR 0083): HMAC-SHA256 under a key derived from the blind-index
 * key for this one use, over the endpoint's id and the material. The store never sees a key in
 * clear, cannot test guesses without the key, and cannot tell two endpoints' equal keys apart
 * from different ones.
 */
export type DedupeHasher = (endpointId: string, material: string) => Uint8Array;

export function createDedupeHasher(blindIndexKey: Uint8Array): DedupeHasher {
  const key = createHmac("sha256", blindIndexKey).update("whc deduplication key v1").digest();
  return (endpointId, material) => createHmac("sha256", key).update(endpointId).update("\n").update(material, "utf8").digest();
}
