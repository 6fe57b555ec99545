import { MAX_RESULT_BODY_BYTES, MAX_RESULT_HEADER_BYTES, MAX_RESULT_TARGET_CHARS } from "./limits.js";
import type { TransformRequest } from "./request.js";

/** Why a returned request cannot be sent; its message goes to the attempt as it is. */
export class InvalidResultError extends Error {
  override readonly name = "InvalidResultError";
}

const FIELDS = new Set(["method", "path", "query", "headers", "body", "bodyBase64"]);
/** RFC 9110 token: a method or a header name. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What Node's http client sends in a header value: tab, visible ASCII and space, and obs-text. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** A path or query: visible ASCII only (other characters percent-encoded), no "#"; a path without "?". */
const PATH = /^\/[\x21-\x22\x24-\x3e\x40-\x7e]*$/;
const QUERY = /^[\x21-\x22\x24-\x7e]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The methods Node's http client cannot send as an ordinary request. */
const REFUSED_METHODS = new Set(["CONNECT"]);

const bad = (message: string) => new InvalidResultError(message);

/** What a value is, for a message. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function checkMethod(method: unknown): string {
  if (typeof method !== "string") throw bad(`method must be a string, not ${kindOf(method)}`);
  if (method.length > 32 || !TOKEN.test(method)) throw bad(`method ${JSON.stringify(method.slice(0, 40))} is not an HTTP method`);
  if (REFUSED_METHODS.has(method.toUpperCase())) throw bad(`method ${method} cannot be forwarded`);
  return method;
}

function checkTarget(path: unknown, query: unknown): { path: string; query: string } {
  if (typeof path !== "string") throw bad(`path must be a string, not ${kindOf(path)}`);
  if (!path.startsWith("/")) throw bad(`path must start with "/"`);
  if (path.length > MAX_RESULT_TARGET_CHARS) throw bad(`path is longer than ${MAX_RESULT_TARGET_CHARS} characters`);
  if (!PATH.test(path)) throw bad(`path may hold only visible ASCII characters (percent-encode the others), and no "?" or "#"`);
  if (typeof query !== "string") throw bad(`query must be a string, not ${kindOf(query)}`);
  if (query.length > MAX_RESULT_TARGET_CHARS) throw bad(`query is longer than ${MAX_RESULT_TARGET_CHARS} characters`);
  if (!QUERY.test(query)) throw bad(`query may hold only visible ASCII characters (percent-encode the others), and no "#"`);
  return { path, query: query.startsWith("?") ? query.slice(1) : query };
}

/** Header names lower-cased; two spellings of one name are one header, their values in order. */
function checkHeaders(headers: unknown): Record<string, string[]> {
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
    throw bad(`headers must be an object of name -> [values], not ${kindOf(headers)}`);
  }
  const out = Object.create(null) as Record<string, string[]>;
  let bytes = 0;
  for (const [name, values] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw bad(`header name ${JSON.stringify(name.slice(0, 80))} is not a valid HTTP header name`);
    if (!Array.isArray(values)) throw bad(`headers[${JSON.stringify(name)}] must be an array of strings, not ${kindOf(values)}`);
    const list = (out[name.toLowerCase()] ??= []);
    for (const value of values as unknown[]) {
      if (typeof value !== "string") throw bad(`headers[${JSON.stringify(name)}] must be an array of strings; it holds ${kindOf(value)}`);
      if (!HEADER_VALUE.test(value)) {
        throw bad(`headers[${JSON.stringify(name)}] holds a value with a character a header cannot carry (a control character, or one above U+00FF)`);
      }
      bytes += name.length + value.length + 4;
      list.push(value);
    }
  }
  if (bytes > MAX_RESULT_HEADER_BYTES) throw bad(`the headers are larger than ${MAX_RESULT_HEADER_BYTES} bytes`);
  return out;
}

function checkBody(result: Record<string, unknown>): Pick<TransformRequest, "body" | "bodyBase64"> {
  const { body, bodyBase64 } = result;
  if (bodyBase64 !== undefined) {
    if (body !== undefined) throw bad("return either body or bodyBase64, not both");
    if (typeof bodyBase64 !== "string") throw bad(`bodyBase64 must be a string, not ${kindOf(bodyBase64)}`);
    if (!BASE64.test(bodyBase64)) throw bad("bodyBase64 is not valid base64 (standard alphabet, with padding)");
    if ((bodyBase64.length / 4) * 3 > MAX_RESULT_BODY_BYTES + 2) throw bad(`the body is larger than ${MAX_RESULT_BODY_BYTES} bytes`);
    return { bodyBase64 };
  }
  if (body === undefined) return {};
  const size = typeof body === "string" ? Buffer.byteLength(body, "utf8") : Buffer.byteLength(JSON.stringify(body), "utf8");
  if (size > MAX_RESULT_BODY_BYTES) throw bad(`the body is larger than ${MAX_RESULT_BODY_BYTES} bytes`);
  return { body };
}

/**
 * The request a transform returned, checked field by field. `result` comes from JSON.parse of
 * what the sandbox wrote, so it holds only JSON values; anything that could not be sent is refused
 * with a message saying what to change. Unknown fields are refused too: a misspelt `header` would
 * otherwise be dropped without a word.
 */
export function checkResult(result: unknown): TransformRequest | null {
  if (result === null) return null;
  if (typeof result !== "object" || Array.isArray(result)) {
    throw bad(`transform must return the request (an object) or null to skip, not ${kindOf(result)}`);
  }
  const fields = result as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !FIELDS.has(k));
  if (unknown.length) throw bad(`unknown field ${JSON.stringify(unknown[0])}: a request has method, path, query, headers, body or bodyBase64`);
  return {
    method: checkMethod(fields.method),
    ...checkTarget(fields.path, fields.query),
    headers: checkHeaders(fields.headers),
    ...checkBody(fields),
  };
}
