/** One raw header line, in arrival order; the name in any case. */
export type HeaderPair = readonly [name: string, value: string];

/**
 * The value of the first header with this name (case-insensitive), without surrounding
 * whitespace, which HTTP does not count as part of a field value.
 *
 * The first copy wins when a header repeats: each provider sends its signature headers once,
 * and a later copy is more likely to have been appended on the way than to be the provider's.
 */
export function header(headers: readonly HeaderPair[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [n, v] of headers) if (n.toLowerCase() === wanted) return v.trim();
  return undefined;
}

export function hasHeader(headers: readonly HeaderPair[], ...names: readonly string[]): boolean {
  return names.some((name) => header(headers, name) !== undefined);
}
