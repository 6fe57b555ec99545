/**
 * Reading a body for its event type. Bodies are arbitrary bytes (binary, truncated, not UTF-8),
 * so everything here answers undefined instead of throwing. JSON bodies are read by
 * json-fields.ts.
 */

/** Past this, parsing costs more than an event type is worth. */
const MAX_PARSE_BYTES = 8 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function utf8Text(body: Uint8Array): string | undefined {
  if (body.length === 0 || body.length > MAX_PARSE_BYTES) return undefined;
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

/** One field of an `application/x-www-form-urlencoded` body. */
export function formField(body: Uint8Array, name: string): string | undefined {
  const text = utf8Text(body);
  return text === undefined ? undefined : (new URLSearchParams(text).get(name) ?? undefined);
}
