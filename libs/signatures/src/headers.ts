/** One raw header line, in arrival order; the name in any case. */
export type HeaderPair = readonly [name: string, value: string];

/**
 * Lower-cased name -> first value, built once per frozen header list. Detection asks every
 * provider in turn and the event type and diagnosis ask again: on a capture that is hundreds
 * of lookups of one list, which a scan lower-casing every name each time made a measurable
 * share of the happy path. Only frozen lists are indexed, so a list that can still change is
 * never answered from a stale index.
 *
 * Only the last list's index is kept: a capture's lookups come one after another, in one turn
 * of the event loop. A WeakMap kept one entry per capture, and V8's young-generation
 * collections do not clear a WeakMap's entries (only full ones do): each capture's headers and
 * index outlived it, were copied at every scavenge and then promoted (docs/performance.md,
 * "Scavenges keep much more").
 */
let lastList: readonly HeaderPair[] | undefined;
let lastIndex: Map<string, string> | undefined;
/** Or, for the last list, an object by lower-cased name that a caller vouched for (indexedBy). */
let lastByName: Readonly<Record<string, string | string[] | undefined>> | undefined;
const lowered = new Map<string, string>();

function lower(name: string): string {
  let value = lowered.get(name);
  if (value === undefined) {
    value = name.toLowerCase();
    // Names asked for are the providers' constants; a bound keeps odd callers from growing it.
    if (lowered.size < 1024) lowered.set(name, value);
  }
  return value;
}

/**
 * Lets lookups in the frozen list `headers` read `byName` instead of indexing the list: an object
 * whose key for each lower-cased name is that name's value, which holds for Node's
 * `IncomingMessage.headers` when no name repeats (set-cookie's value is then a one-element
 * array). Node builds that object for every request anyway; the index cost a Map per capture
 * (3 % of what ingest allocated). The caller vouches for it; only this list's lookups use it.
 */
export function indexedBy(headers: readonly HeaderPair[], byName: Readonly<Record<string, string | string[] | undefined>>): void {
  if (!Object.isFrozen(headers)) return;
  lastList = headers;
  lastIndex = undefined;
  lastByName = byName;
}

function indexOf(headers: readonly HeaderPair[]): Map<string, string> | undefined {
  if (headers === lastList) return lastIndex;
  if (!Object.isFrozen(headers)) return undefined;
  lastByName = undefined;
  const index = new Map<string, string>();
  // Indexed, not for-of with destructuring (an array's destructuring iterates it too): that
  // allocated iterator results per header here (a sampling heap profile of ingest under load:
  // 2 % of everything it allocated).
  for (let i = 0; i < headers.length; i += 1) {
    const pair = headers[i] as HeaderPair;
    const key = pair[0].toLowerCase();
    if (!index.has(key)) index.set(key, pair[1]);
  }
  lastList = headers;
  lastIndex = index;
  return index;
}

/**
 * The value of the first header with this name (case-insensitive), without surrounding
 * whitespace, which HTTP does not count as part of a field value.
 *
 * The first copy wins when a header repeats: each provider sends its signature headers once,
 * and a later copy is more likely to have been appended on the way than to be the provider's.
 */
export function header(headers: readonly HeaderPair[], name: string): string | undefined {
  const wanted = lower(name);
  if (headers === lastList && lastByName !== undefined) {
    // Own string values only: a name such as "constructor" finds Object.prototype's, not a header.
    const value = lastByName[wanted];
    return typeof value === "string" ? value.trim() : Array.isArray(value) && typeof value[0] === "string" ? value[0].trim() : undefined;
  }
  const index = indexOf(headers);
  if (index !== undefined) return index.get(wanted)?.trim();
  for (let i = 0; i < headers.length; i += 1) {
    const pair = headers[i] as HeaderPair;
    if (pair[0].toLowerCase() === wanted) return pair[1].trim();
  }
  return undefined;
}

export function hasHeader(headers: readonly HeaderPair[], ...names: readonly string[]): boolean {
  // A loop, not some() with a closure: detection asks this of every provider on every capture.
  for (let i = 0; i < names.length; i += 1) if (header(headers, names[i] as string) !== undefined) return true;
  return false;
}
