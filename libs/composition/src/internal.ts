import type { ConnectRouter, Transport } from "@connectrpc/connect";
import type { Logger } from "@whc/logging";
import {
  checkInternalUrl,
  createPeerTransport,
  loadInternalCredentials,
  serveH2c,
  type H2cServer,
  type InternalCredentialSettings,
  type InternalCredentials,
} from "@whc/rpc";
import type { Peers } from "./nodes.js";

/**
 * How a distributed service reaches its peers and is reached by them (docs/operations.md,
 * "Security model"): the token every call carries, optional mutual TLS, internal ports on
 * WHC_INTERNAL_HOST. The all-in-one process wires its services in memory and needs none of it.
 */

/** Reads the token (required) and the TLS files (all three or none); a problem stops start-up naming its variable. */
export function internalCredentials(config: InternalCredentialSettings): InternalCredentials {
  return loadInternalCredentials(config);
}

interface PeerUrls {
  readonly catalogUrl: string;
  readonly cryptoUrl: string;
  readonly replayUrl?: string;
  readonly rpcTimeoutMs: number;
}

/**
 * One transport per peer, each URL checked against the credentials (https: with mutual TLS,
 * http: without). `replayTimeoutMs`: the deadline of calls to replay when it is not
 * WHC_RPC_TIMEOUT_MS (ingest's proxy calls).
 */
export function peersOf(config: PeerUrls & { readonly replayUrl: string }, credentials: InternalCredentials, replayTimeoutMs?: number): Required<Peers>;
export function peersOf(config: PeerUrls, credentials: InternalCredentials): Peers;
export function peersOf(config: PeerUrls, credentials: InternalCredentials, replayTimeoutMs = config.rpcTimeoutMs): Peers {
  const peer = (variable: string, url: string, timeoutMs: number): Transport => {
    checkInternalUrl(variable, url, credentials);
    return createPeerTransport(url, timeoutMs, credentials);
  };
  return {
    catalog: peer("WHC_CATALOG_URL", config.catalogUrl, config.rpcTimeoutMs),
    crypto: peer("WHC_CRYPTO_URL", config.cryptoUrl, config.rpcTimeoutMs),
    ...(config.replayUrl === undefined ? {} : { replay: peer("WHC_REPLAY_URL", config.replayUrl, replayTimeoutMs) }),
  };
}

/** An internal service's port on WHC_INTERNAL_HOST, every call but health checks authenticated. */
export function serveInternal(
  routes: (router: ConnectRouter) => void,
  port: number,
  config: { readonly internalHost: string },
  credentials: InternalCredentials,
  logger: Logger,
): Promise<H2cServer> {
  return serveH2c({ routes, port, host: config.internalHost, logger, credentials });
}
