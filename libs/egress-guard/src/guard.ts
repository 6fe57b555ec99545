import { isIP } from "node:net";
import type { TargetRefusalReason } from "@whc/api-model";
import { networkInterfaces } from "node:os";
import { classifyAddress } from "./classify.js";
import { createConnectionPool, sendOnce, type ConnectFunction, type SendInput, type SendResult } from "./send.js";
import { systemResolver, vetTarget, type Resolver, type Vetted } from "./target.js";

/** A service of this deployment that no outbound request may reach: its host (name or address) and port. */
export interface InternalService {
  host: string;
  port: number;
}

export interface EgressGuardOptions {
  /** WHC_REPLAY_ALLOW_PRIVATE_TARGETS: private, loopback and link-local targets admitted. */
  allowPrivate: boolean;
  /**
   * The deployment's own internal services (catalog, crypto, replay, metrics, NATS): refused
   * even when private targets are allowed (design §14), on their host and on any address of
   * this machine when they listen on it.
   */
  internal?: readonly InternalService[];
  resolver?: Resolver | undefined;
  /** Test seam: opens the connections (injected socket failures). */
  connect?: ConnectFunction | undefined;
  /** How long a kept connection may stay idle (default 4 s; 0 keeps none: a connection per request). */
  keepIdleMs?: number;
  /**
   * Idle connections kept per address (default 16): as many as requests to one origin may run
   * at once (the egress slots), or a burst's connections are closed as it ends and opened anew.
   */
  keepPerAddress?: number;
}

/**
 * Why a target is refused, as `target_not_allowed`'s `details.reason` says it (design §14).
 * `dns_failure` is not among them: a name that does not resolve is a network outcome.
 */
export type RefusalReason = TargetRefusalReason;

/** The `details.reason` of a refusal; undefined for `dns_failure` (not a refusal) and `bad_url` (a validation error). */
export function refusalReason(vetted: { reason: string; category?: string | undefined }): RefusalReason | undefined {
  switch (vetted.reason) {
    case "scheme_not_allowed":
      return "scheme";
    case "credentials_in_url":
      return "credentials";
    case "port_not_allowed":
    case "internal_service":
      return "port";
    case "address_not_allowed":
      if (vetted.category === "loopback") return "loopback";
      if (vetted.category === "link_local") return "link_local";
      if (vetted.category === "metadata") return "metadata";
      return "private_address";
    default:
      return undefined;
  }
}

/** Addresses that reach this machine: loopback, the unspecified address, and every interface's. */
function localAddresses(): Set<string> {
  const out = new Set<string>(["0.0.0.0", "::"]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase());
  return out;
}

const isLocal = (address: string, local: ReadonlySet<string>) => local.has(address.toLowerCase()) || classifyAddress(address).category === "loopback";

/**
 * The one way out of the deployment: replay, forwards and alerts vet and send through it.
 * It vets a URL (scheme, every address its host resolves to, the deployment's own internal
 * services), then sends to the vetted address only, over a connection kept for that address
 * when one is idle (ADR 0096); no failure of the connection, however it comes, escapes as an
 * exception (design §14).
 */
export function createEgressGuard(options: EgressGuardOptions) {
  const resolver = options.resolver ?? systemResolver;
  const internal = options.internal ?? [];
  const local = localAddresses();
  const keepIdleMs = options.keepIdleMs ?? 4000;
  const pool = keepIdleMs > 0 ? createConnectionPool({ connect: options.connect, idleMs: keepIdleMs, maxIdlePerAddress: options.keepPerAddress }) : undefined;

  /** The addresses an internal service listens on: its host's, or every local one when it listens on this machine. */
  async function addressesOf(service: InternalService): Promise<string[]> {
    if (isIP(service.host)) return [service.host];
    try {
      return (await resolver(service.host)).map((a) => a.address);
    } catch {
      return [];
    }
  }

  async function reachesInternal(address: string, port: number): Promise<boolean> {
    for (const service of internal) {
      if (service.port !== port) continue;
      const addresses = await addressesOf(service);
      for (const a of addresses) {
        if (a.toLowerCase() === address.toLowerCase()) return true;
        // A service bound on this machine (loopback or every interface) is reached by any local address.
        if (isLocal(a, local) && isLocal(address, local)) return true;
      }
    }
    return false;
  }

  return {
    async vet(url: string): Promise<Vetted> {
      const vetted = await vetTarget(url, { allowPrivate: options.allowPrivate, resolver });
      if (!vetted.ok || internal.length === 0) return vetted;
      if (await reachesInternal(vetted.address, vetted.target.port)) return { ok: false, reason: "internal_service" };
      return vetted;
    },
    send(input: Omit<SendInput, "connect">): Promise<SendResult> {
      return sendOnce({ ...input, connect: options.connect }, pool);
    },
    /** Closes the kept connections (a stopping process; idle ones never hold it open). */
    close(): void {
      pool?.close();
    },
  };
}

export type EgressGuard = ReturnType<typeof createEgressGuard>;
