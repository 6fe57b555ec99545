export type HeaderPair = readonly [name: string, value: string];

/** The first value of a header, names compared case-insensitively. */
export function header(headers: readonly HeaderPair[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [n, v] of headers) if (n.toLowerCase() === lower) return v;
  return undefined;
}

export function has(headers: readonly HeaderPair[], ...names: string[]): boolean {
  return names.some((n) => header(headers, n) !== undefined);
}
