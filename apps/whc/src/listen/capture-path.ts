import type { ApiClient, EventDetailJson } from "@whc/api-model";

/**
 * The bytes one bash word stands for, as the cURL export writes words: `'...'` (printable
 * ASCII but `'`) or `$'...'` with `\\`, `\'`, `\n`, `\r`, `\t` and `\xHH` escapes. `start` is
 * where the word begins; undefined when none begins there. One character per byte.
 */
export function unquoteWord(text: string, start: number): string | undefined {
  if (text.startsWith("'", start)) {
    const end = text.indexOf("'", start + 1);
    return end < 0 ? undefined : text.slice(start + 1, end);
  }
  if (!text.startsWith("$'", start)) return undefined;
  const escapes: Record<string, string> = { "\\": "\\", "'": "'", n: "\n", r: "\r", t: "\t" };
  let out = "";
  for (let i = start + 2; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") return out;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const next = text[i + 1] ?? "";
    if (next === "x" && /^[0-9a-f]{2}$/i.test(text.slice(i + 2, i + 4))) {
      out += String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (next in escapes) {
      out += escapes[next];
      i += 1;
    } else return undefined;
  }
  return undefined;
}

/**
 * The capture's sub-path and query (what came after its webhook URL). The event detail does
 * not carry it; the cURL export's URL does, as `<webhookUrl><path>`.
 */
export async function capturePathOf(client: ApiClient, webhookUrl: string, detail: EventDetailJson): Promise<string> {
  // Read from the detail should the API ever show it there.
  const shown = (detail as { path?: unknown }).path;
  if (typeof shown === "string") return shown;
  const { command } = await client.events.curl(detail.endpointId, detail.id);
  for (const quote of ["'", "$'"]) {
    const at = command.indexOf(` ${quote}${webhookUrl}`);
    if (at < 0) continue;
    const url = unquoteWord(command, at + 1);
    if (url?.startsWith(webhookUrl)) return url.slice(webhookUrl.length);
  }
  throw new Error(`the cURL export of event ${detail.id} does not hold its URL`);
}
