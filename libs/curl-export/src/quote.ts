const PLAIN = /^[\x20-\x26\x28-\x7e]*$/;

/**
 * A bash word that means exactly `bytes`: single quotes when every byte is printable ASCII
 * other than `'`; otherwise ANSI-C quoting with every other byte escaped, so nothing can end
 * the word early, expand, or add a line. NUL cannot be held by a bash string at all.
 */
export function shellQuoteBytes(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString("latin1");
  if (PLAIN.test(text)) return `'${text}'`;
  let out = "$'";
  for (const byte of bytes) {
    if (byte === 0) throw new Error("a bash word cannot hold a NUL byte");
    if (byte === 0x5c) out += "\\\\";
    else if (byte === 0x27) out += "\\'";
    else if (byte === 0x0a) out += "\\n";
    else if (byte === 0x0d) out += "\\r";
    else if (byte === 0x09) out += "\\t";
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}'`;
}

/** For header names and values and URLs: JS strings whose chars are bytes (latin1). */
export function shellQuote(text: string): string {
  return shellQuoteBytes(Buffer.from(text, "latin1"));
}
