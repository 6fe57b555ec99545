import { HOP_HEADER, NOT_SENT_ON_HEADERS, nextHop } from "@whc/api-model";
import { HOP_BY_HOP } from "@whc/egress-guard";
import { PROVIDERS, signHeaders, signatureHeaderNames, type Provider } from "@whc/signatures";

/**
 * Beyond the hop-by-hop headers sendOnce drops itself: the ones that described the original
 * hop (proxies, forwarding) rather than the request. Neither replays nor forwards carry them.
 */
export const NOT_REPLAYED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...NOT_SENT_ON_HEADERS]);

export function asProvider(value: string): Provider {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as Provider) : "generic";
}

/** What re-signing needs (replay's `resign` mode, a forward with a target secret). */
export interface Resign {
  secret: Uint8Array;
  /** The URL the request goes to (some schemes sign it). */
  url: string;
  nowMs: number;
  genericSignatureHeader?: string | undefined;
  genericSignaturePrefix?: string | undefined;
}

/**
 * The captured headers as they go out again: end-to-end ones only, in order, then the hop
 * count (`X-Whc-Hop`, design §14: the capture's own plus one, so a loop through this or another
 * deployment's endpoints stops at WHC_MAX_HOPS). With `resign`, the provider's signature
 * headers are replaced by fresh ones computed with the given secret over the exact body, as
 * the provider would have sent them now.
 */
export function outboundHeaders(
  captured: readonly { name: string; value: string }[],
  provider: string,
  body: Uint8Array | undefined,
  resign?: Resign,
): [string, string][] {
  const headers = captured.filter((h) => !NOT_REPLAYED.has(h.name.toLowerCase())).map((h): [string, string] => [h.name, h.value]);
  const hop: [string, string] = [HOP_HEADER, String(nextHop(captured.map((h) => [h.name, h.value] as const)))];
  if (!resign) return [...headers, hop];
  const scheme = asProvider(provider);
  const drop = new Set(signatureHeaderNames(scheme, resign.genericSignatureHeader || undefined));
  const kept = headers.filter(([name]) => !drop.has(name.toLowerCase()));
  const fresh = signHeaders({
    provider: scheme,
    secret: resign.secret,
    body: body ?? new Uint8Array(),
    nowMs: resign.nowMs,
    url: resign.url,
    headers,
    genericSignatureHeader: resign.genericSignatureHeader || undefined,
    genericSignaturePrefix: resign.genericSignaturePrefix || undefined,
  });
  for (const [name, value] of fresh) kept.push([name, value]);
  kept.push(hop);
  return kept;
}
