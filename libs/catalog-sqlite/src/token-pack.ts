/**
 * Search tokens packed into one buffer (each token: one length byte, then its bytes) for the
 * trip to the store's thread. The buffer has memory of its own, never a slice of Node's
 * shared pool, so posting it copies only its bytes.
 */
export function packTokens(tokens: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const t of tokens) {
    if (t.length > 255) throw new RangeError("a search token is longer than 255 bytes");
    size += 1 + t.length;
  }
  const packed = new Uint8Array(size);
  let at = 0;
  for (const t of tokens) {
    packed[at] = t.length;
    packed.set(t, at + 1);
    at += 1 + t.length;
  }
  return packed;
}

/** The tokens of packTokens, as views on the packed buffer. */
export function unpackTokens(packed: Uint8Array): Uint8Array[] {
  const tokens: Uint8Array[] = [];
  for (let at = 0; at < packed.length; ) {
    const length = packed[at] as number;
    if (at + 1 + length > packed.length) throw new RangeError("packed search tokens are cut short");
    tokens.push(packed.subarray(at + 1, at + 1 + length));
    at += 1 + length;
  }
  return tokens;
}
