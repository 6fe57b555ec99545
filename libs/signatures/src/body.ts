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

/**
 * The first value of one field of an `application/x-www-form-urlencoded` body, as
 * `URLSearchParams.get` gives it. Names are compared in place and only the matching pair is
 * decoded (by URLSearchParams itself): parsing a whole 8 MiB form of two million pairs took
 * 200-260 ms of the event loop.
 */
export function formField(body: Uint8Array, name: string): string | undefined {
  const text = utf8Text(body);
  if (text === undefined) return undefined;
  const after = (ch: string, from: number) => {
    const at = text.indexOf(ch, from);
    return at < 0 ? text.length : at;
  };
  // Where the next "=", "%" and "+" are: each found once, however many pairs there are.
  let eq = -1;
  let percent = -1;
  let plus = -1;
  for (let start = text.startsWith("?") ? 1 : 0; start <= text.length; ) {
    const end = after("&", start);
    if (end > start) {
      if (eq < start) eq = after("=", start);
      if (percent < start) percent = after("%", start);
      if (plus < start) plus = after("+", start);
      const nameEnd = Math.min(eq, end);
      const matches =
        percent < nameEnd || plus < nameEnd
          ? new URLSearchParams(text.slice(start, end)).keys().next().value === name
          : nameEnd - start === name.length && text.startsWith(name, start);
      if (matches) return new URLSearchParams(text.slice(start, end)).values().next().value ?? "";
    }
    start = end + 1;
  }
  return undefined;
}
