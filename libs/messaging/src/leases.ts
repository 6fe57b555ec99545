import { createHash, randomInt } from "node:crypto";
import type { KV } from "nats";
import type { Logger } from "@whc/logging";
import type { NatsHandle } from "./nats-connection.js";
import type { EgressLeases } from "@whc/ports";

export const LEASE_BUCKET = "whc_egress_leases";

/** NATS keys allow [-/_=.a-zA-Z0-9]; an origin becomes a fixed-length hash. */
export function originHash(origin: string): string {
  return createHash("sha256").update(origin.toLowerCase()).digest("hex").slice(0, 32);
}

function slotOrder(slots: number): number[] {
  // Start at a random slot so concurrent acquirers do not all race for slot 0.
  const start = randomInt(slots);
  return Array.from({ length: slots }, (_, i) => (start + i) % slots);
}

/** In-process leases for all-in-one: the same slots, expiring after the TTL like NATS's. */
export function createMemoryLeases(options: { slotsPerOrigin: number; ttlMs: number; now?: () => number }): EgressLeases {
  const now = options.now ?? Date.now;
  const held = new Map<string, { token: number; expires: number }>();
  let tokens = 0;
  return {
    kind: "memory",
    async acquire(origin) {
      const hash = originHash(origin);
      for (const slot of slotOrder(options.slotsPerOrigin)) {
        const key = `${hash}.${slot}`;
        const current = held.get(key);
        if (current && current.expires > now()) continue;
        const token = ++tokens;
        held.set(key, { token, expires: now() + options.ttlMs });
        return {
          key,
          async release() {
            if (held.get(key)?.token === token) held.delete(key);
          },
        };
      }
      return undefined;
    },
    connected: () => true,
    async close() {
      held.clear();
    },
  };
}

/**
 * Leases in a NATS KV bucket (history 1, max age = the lease TTL): a lease is
 * `kv.create("<originHash>.<slot>")`, which fails when the key exists; it is released by a
 * delete fenced on our revision, so a lease that expired and was taken by another process is
 * never released by us. A crashed holder's key ages out by itself.
 */
export function createNatsLeases(
  handle: NatsHandle,
  options: { slotsPerOrigin: number; ttlS: number; timeoutMs?: number; bucket?: string },
  logger: Logger,
): EgressLeases {
  let kv: Promise<KV> | undefined;
  const timeout = options.timeoutMs ?? 2000;

  function bucket(): Promise<KV> {
    kv ??= handle.ready
      .then((nc) => nc.jetstream({ timeout }).views.kv(options.bucket ?? LEASE_BUCKET, { history: 1, ttl: options.ttlS * 1000, timeout }))
      .catch((err: unknown) => {
        kv = undefined;
        throw err;
      });
    return kv;
  }

  return {
    kind: "nats",
    async acquire(origin) {
      if (!handle.connected()) return undefined;
      let store: KV;
      try {
        store = await bucket();
      } catch (err) {
        logger.warn({ err }, "egress lease bucket unavailable");
        return undefined;
      }
      const hash = originHash(origin);
      for (const slot of slotOrder(options.slotsPerOrigin)) {
        const key = `${hash}.${slot}`;
        let revision: number;
        try {
          revision = await store.create(key, new Uint8Array([1]));
        } catch (err) {
          const code = (err as { api_error?: { err_code?: number } }).api_error?.err_code;
          if (code === 10071 || /wrong last sequence/.test(String(err))) continue;
          logger.warn({ err }, "egress lease store failed");
          return undefined;
        }
        return {
          key,
          async release() {
            try {
              await store.delete(key, { previousSeq: revision });
            } catch (err) {
              // Already expired and maybe re-taken, or NATS is down: the TTL frees it.
              logger.debug({ err, key }, "egress lease not released");
            }
          },
        };
      }
      return undefined;
    },
    connected: () => handle.connected(),
    close: () => handle.close(),
  };
}
