/**
 * The request a transform sees and returns (design §17): `{method, path, query, headers, body}`.
 * It crosses into the sandbox as JSON text and comes back the same way.
 */
export interface TransformRequest {
  method: string;
  /** The capture's sub-path after the endpoint's URL, always starting with "/" ("/" when there is none). */
  path: string;
  /** The raw query string without its "?" ("" when there is none), as it arrived: not decoded. */
  query: string;
  /** Lower-case header names, each with its values in arrival order. */
  headers: Record<string, string[]>;
  /** A body that is UTF-8 and a JSON object or array: parsed; any other UTF-8 body: its text. */
  body?: unknown;
  /** Instead of `body`, for a body that is not UTF-8: its bytes in base64. */
  bodyBase64?: string;
}

/** A captured request in the parts the forwarder has at hand. */
export interface CapturedRequestParts {
  method: string;
  /** The sub-path after the endpoint's URL; "" reads as "/". */
  path: string;
  /** The raw query string; a leading "?" is dropped. */
  query: string;
  headers: ReadonlyArray<readonly [string, string]> | Record<string, string[]>;
  body: Uint8Array;
}

/** A request ready to send: header pairs in order, the body as bytes. */
export interface OutboundRequestParts {
  method: string;
  path: string;
  query: string;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/** Fatal: a body that is not UTF-8 goes as base64. ignoreBOM: a byte order mark stays in the text. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** The body as a transform is given it: `{body}` or `{bodyBase64}`. */
export function bodyFields(bytes: Uint8Array): Pick<TransformRequest, "body" | "bodyBase64"> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { bodyBase64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") };
  }
  return { body: isJsonContainer(text) ?? text };
}

/**
 * Only an object or an array counts as a JSON body: a bare JSON string, number, boolean or null
 * is given as its text, so a string body always means "these characters", coming and going.
 */
function isJsonContainer(text: string): object | undefined {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(text) as object;
  } catch {
    return undefined;
  }
}

/** Header pairs grouped by lower-case name; no prototype, so a header called __proto__ is a header. */
function groupHeaders(headers: CapturedRequestParts["headers"]): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  const pairs: Iterable<readonly [string, string]> = Array.isArray(headers)
    ? (headers as ReadonlyArray<readonly [string, string]>)
    : Object.entries(headers as Record<string, string[]>).flatMap(([name, values]) => values.map((v) => [name, v] as const));
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    (out[key] ??= []).push(value);
  }
  return out;
}

/** A captured request as a transform is given it. */
export function toTransformRequest(parts: CapturedRequestParts): TransformRequest {
  return {
    method: parts.method,
    path: parts.path === "" ? "/" : parts.path,
    query: parts.query.startsWith("?") ? parts.query.slice(1) : parts.query,
    headers: groupHeaders(parts.headers),
    ...bodyFields(parts.body),
  };
}

/** The bytes a returned request's body stands for: JSON re-serialised, a string as UTF-8, base64 decoded. */
export function bodyBytes(req: Pick<TransformRequest, "body" | "bodyBase64">): Uint8Array {
  if (req.bodyBase64 !== undefined) return new Uint8Array(Buffer.from(req.bodyBase64, "base64"));
  if (req.body === undefined) return new Uint8Array(0);
  if (typeof req.body === "string") return encoder.encode(req.body);
  return encoder.encode(JSON.stringify(req.body));
}

/** Whether two bodies, as a transform sees them, are the same value. */
function sameBody(a: Pick<TransformRequest, "body" | "bodyBase64">, b: Pick<TransformRequest, "body" | "bodyBase64">): boolean {
  if (a.bodyBase64 !== undefined || b.bodyBase64 !== undefined) return a.bodyBase64 === b.bodyBase64;
  if (typeof a.body === "string" || typeof b.body === "string") return a.body === b.body;
  return JSON.stringify(a.body) === JSON.stringify(b.body);
}

/**
 * A request a transform returned, ready to send. With `originalBody` (the captured bytes the
 * transform was given), a body the transform left as it was is sent as those exact bytes: a JSON
 * body written back would lose its spacing and the digits of numbers beyond double precision.
 */
export function fromTransformRequest(req: TransformRequest, originalBody?: Uint8Array): OutboundRequestParts {
  const headers: Array<[string, string]> = [];
  for (const [name, values] of Object.entries(req.headers)) for (const value of values) headers.push([name, value]);
  const unchanged = originalBody !== undefined && sameBody(bodyFields(originalBody), req);
  return {
    method: req.method,
    path: req.path,
    query: req.query,
    headers,
    body: unchanged ? originalBody : bodyBytes(req),
  };
}
