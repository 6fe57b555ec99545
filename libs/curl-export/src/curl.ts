import { HOP_BY_HOP_HEADERS } from "@whc/api-model";
import { shellQuote, shellQuoteBytes } from "./quote.js";

export type HeaderPair = readonly [name: string, value: string];

export interface CurlInput {
  method: string;
  url: string;
  headers: readonly HeaderPair[];
  /** Undefined: no body is available (not stored, or not decrypted). */
  body: Uint8Array | undefined;
  /** The stored body is only a prefix of what was sent. */
  bodyTruncated: boolean;
  unmasked: boolean;
  /** e.g. the endpoint's configured signature header. */
  extraMaskedHeaders?: readonly string[];
}

export interface CurlOutput {
  command: string;
  byteIdentical: boolean;
  bodyOmitted: boolean;
  headersMasked: boolean;
}

export const MASK = "[MASKED]";

const ALWAYS_MASKED = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);
const MASKED_PARTS = ["token", "secret", "signature", "api-key", "apikey", "hmac"];

/** Headers of one hop, or that curl computes itself from the URL and the body. */
const LEFT_OUT = new Set<string>([...HOP_BY_HOP_HEADERS, "host", "content-length", "expect"]);

export function isMaskedHeader(name: string, extra: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return (
    ALWAYS_MASKED.has(lower) || MASKED_PARTS.some((part) => lower.includes(part)) || extra.some((e) => e.toLowerCase() === lower)
  );
}

const BODYLESS = new Set(["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"]);

/**
 * One line of bash that replays a captured request with curl. `--globoff` and
 * `--path-as-is` send the URL exactly as captured; curl's own default headers are removed
 * when the original did not carry them, so the request is the original, not curl's idea of
 * it. A body with a NUL byte is piped in through base64 on the same line.
 */
export function buildCurlCommand(input: CurlInput): CurlOutput {
  const method = input.method.toUpperCase();
  const args: string[] = ["curl", "--globoff", "--path-as-is"];
  args.push(method === "HEAD" ? "--head" : `-X ${shellQuote(input.method)}`);
  args.push(shellQuote(input.url));

  let headersMasked = false;
  const present = new Set<string>();
  for (const [name, value] of input.headers) {
    const lower = name.toLowerCase();
    if (LEFT_OUT.has(lower)) continue;
    present.add(lower);
    let shown = value;
    if (!input.unmasked && isMaskedHeader(name, input.extraMaskedHeaders)) {
      shown = MASK;
      headersMasked = true;
    }
    // An empty value would read as "remove this header" to curl; `Name;` sends it empty.
    args.push(`-H ${shellQuote(shown === "" ? `${name};` : `${name}: ${shown}`)}`);
  }

  const body = input.body;
  const sendsBody = body !== undefined && !(body.length === 0 && BODYLESS.has(method)) && method !== "HEAD";
  for (const [lower, display] of [
    ["user-agent", "User-Agent"],
    ["accept", "Accept"],
    ...(sendsBody ? [["content-type", "Content-Type"] as const] : []),
  ] as const) {
    if (!present.has(lower)) args.push(`-H '${display}:'`);
  }
  if (sendsBody) args.push("-H 'Expect:'");

  let command: string;
  if (!sendsBody) {
    command = args.join(" ");
  } else if (body.includes(0)) {
    args.push("--data-binary @-");
    command = `printf '%s' '${Buffer.from(body).toString("base64")}' | base64 -d | ${args.join(" ")}`;
  } else {
    // --data-binary reads a file when its value starts with @; --data-raw never does.
    args.push(`--data-raw ${body.length === 0 ? "''" : shellQuoteBytes(body)}`);
    command = args.join(" ");
  }
  return {
    command,
    byteIdentical: body !== undefined && !input.bodyTruncated && (sendsBody || body.length === 0),
    bodyOmitted: body === undefined,
    headersMasked,
  };
}
