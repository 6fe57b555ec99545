import type { Client } from "@connectrpc/connect";
import type { CatalogService, CryptoService, Endpoint } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { redactSettingsOf, type EndpointResponseConfig, type InboundSecrets } from "@whc/api-model";
import { responseConfigOf } from "@whc/api-model/present";
import { forwardingOf, type Forwarding } from "./forward.js";
import { inboundGuardOf, type InboundGuard } from "./inbound.js";
import { compileRedactor, type Redactor } from "./redact.js";
import { deduperOf, type Deduper } from "./dedupe.js";

export interface IngestEndpoint {
  endpoint: Endpoint;
  /** The opened endpoint secret, when one is set. */
  secret?: Buffer | undefined;
  /** The secret before the last rotation, opened, while it may still verify. */
  previousSecret?: Buffer | undefined;
  /** What the endpoint answers, parsed once per lookup; undefined: the built-in answer. */
  response?: EndpointResponseConfig | undefined;
  /** relay and proxy endpoints: the mode and the forward settings, parsed once per lookup. */
  forwarding?: Forwarding | undefined;
  /** Who may send (design §16), prepared once per lookup; undefined: anyone. */
  inbound?: InboundGuard | undefined;
  /** What is replaced before storing (design §16), compiled once per lookup; undefined: nothing. */
  redactor?: Redactor | undefined;
  /** How captures are deduplicated (design §17), read once per lookup; undefined: they are not. */
  deduper?: Deduper | undefined;
}

interface Entry {
  value: Promise<IngestEndpoint | undefined>;
  at: number;
  ttl: number;
  /** Set once `value` has resolved, so a hit can be answered without waiting. */
  settled?: { found: IngestEndpoint | undefined };
}

/**
 * Endpoint lookups cached for a few seconds (with the opened secret), so a capture costs no
 * lookup call; an endpoint change notification drops the entry at once. Unknown ids are
 * cached too (briefly), so a flood at a wrong URL does not reach the catalog.
 */
export function createEndpointCache(
  catalog: Client<typeof CatalogService>,
  crypto: Client<typeof CryptoService>,
  options: { ttlMs: number; missTtlMs: number; maxEntries: number; now?: () => number },
) {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  async function load(endpointId: string): Promise<IngestEndpoint | undefined> {
    let endpoint: Endpoint | undefined;
    try {
      endpoint = (await catalog.getEndpoint({ endpointId, includeSealedSecret: true })).endpoint;
    } catch (err) {
      if (AppError.is(err) && err.reason === "not_found") return undefined;
      throw err;
    }
    if (!endpoint) return undefined;
    const open = async (sealed: Uint8Array) =>
      sealed.length > 0 ? Buffer.from((await crypto.openSecret({ sealed })).plaintext) : undefined;
    const [secret, previousSecret, inbound] = await Promise.all([open(endpoint.sealedSecret), open(endpoint.sealedPreviousSecret), open(endpoint.sealedInbound)]);
    return {
      endpoint,
      secret,
      previousSecret,
      response: responseConfigOf(endpoint.responseJson),
      forwarding: forwardingOf(endpoint),
      inbound: inbound && inboundGuardOf(JSON.parse(inbound.toString("utf8")) as InboundSecrets),
      redactor: compileRedactor(redactSettingsOf(endpoint.redactJson)),
      // A proxy endpoint's sender gets the destination's answer: it is never deduplicated (design §17).
      deduper: endpoint.operatingMode === "proxy" ? undefined : deduperOf(endpoint.dedupeJson),
    };
  }

  return {
    get(endpointId: string): Promise<IngestEndpoint | undefined> {
      const hit = entries.get(endpointId);
      if (hit && now() - hit.at < hit.ttl) return hit.value;
      if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value as string);
      const value = load(endpointId);
      const entry: Entry = { value, at: now(), ttl: options.ttlMs };
      entries.set(endpointId, entry);
      value.then(
        (found) => {
          entry.settled = { found };
          if (!found) entry.ttl = options.missTtlMs;
        },
        () => {
          // Failures are never cached: the next capture asks again.
          if (entries.get(endpointId) === entry) entries.delete(endpointId);
        },
      );
      return value;
    },
    /**
     * The cached answer without waiting: `{ found }` when a fresh entry has settled (found is
     * undefined for an unknown id), undefined when get() has to be awaited.
     */
    peek(endpointId: string): { found: IngestEndpoint | undefined } | undefined {
      const hit = entries.get(endpointId);
      return hit && now() - hit.at < hit.ttl ? hit.settled : undefined;
    },
    invalidate(endpointId: string): void {
      entries.delete(endpointId);
    },
  };
}

export type EndpointCache = ReturnType<typeof createEndpointCache>;
