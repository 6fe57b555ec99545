import { decodeBase64 } from "./crypto.js";
import { header } from "./headers.js";
import type { ProviderScheme, SchemeVerifyInput, VerifyOutcome } from "./scheme.js";

/**
 * The near misses diagnosis tries once a signature failed to match: the same check with the
 * secret, body or URL changed the way integrations typically change them. The first change
 * that makes the signature match names the cause. Everything here is bounded, since it runs
 * on what a sender sent.
 */

export type VariantCause = "secret_format" | "body_newline_changed" | "body_reserialized" | "url_mismatch";

export interface Variant {
  cause: VariantCause;
  change: Partial<Pick<SchemeVerifyInput, "secret" | "body" | "url">>;
  explanation: string;
}

/** Newline variants copy the body; past this a failure would cost more than it explains. */
const MAX_NEWLINE_BYTES = 1024 * 1024;
/** Re-serializing parses the body three times over; only worth it for bodies of ordinary size. */
export const MAX_RESERIALIZE_BYTES = 256 * 1024;
const WHSEC = "whsec_";

/** One capture under trial: the scheme, its plain input, and what the trials so far learned. */
export interface Trial {
  scheme: ProviderScheme;
  base: SchemeVerifyInput;
  /** The secrets the endpoint accepts now: the current one, and the previous one during its grace. */
  keys: readonly Uint8Array[];
  attempts: number;
  /**
   * Whether the scheme's verify read `url`: only then can the URL explain a mismatch. A scheme
   * that merely copies its input counts too, which costs the URL tries but never names a wrong cause.
   */
  urlRead: boolean;
}

export function signatureMatches(outcome: VerifyOutcome): boolean {
  return outcome.checks.some((check) => check.name === "signature_matches" && check.ok);
}

/**
 * Whether the signature matches with `change` applied. Judged on the signature alone: a variant
 * that matches on a stale capture still explains the mismatch.
 */
export function attempt(trial: Trial, change: Variant["change"]): boolean {
  const input: SchemeVerifyInput = { ...trial.base, ...change };
  const url = "url" in change ? change.url : trial.base.url;
  // A getter, to learn whether this scheme signs the URL without a list of which ones do.
  Object.defineProperty(input, "url", {
    enumerable: true,
    get: () => {
      trial.urlRead = true;
      return url;
    },
  });
  trial.attempts += 1;
  try {
    return signatureMatches(trial.scheme.verify(input));
  } catch {
    // Schemes promise not to throw; a variant must never turn a diagnosis into a failed capture.
    return false;
  }
}

/** Every variant, cheapest and most telling first; lazily, so the first match stops the work. */
export function* variants(trial: Trial): Generator<Variant> {
  for (const key of trial.keys) yield* secretVariants(trial.scheme, key);
  yield* withKeys(trial.keys, newlineVariants(trial.scheme, trial.base.body));
  yield* withKeys(trial.keys, reserializedVariants(trial.scheme, trial.base.body));
  if (!trial.urlRead && trial.attempts === 0) attempt(trial, {});
  if (trial.urlRead) yield* withKeys(trial.keys, urlVariants(trial));
}

function* withKeys(keys: readonly Uint8Array[], changes: Iterable<Variant>): Generator<Variant> {
  for (const variant of changes) for (const key of keys) yield { ...variant, change: { ...variant.change, secret: key } };
}

function* secretVariants(scheme: ProviderScheme, key: Uint8Array): Generator<Variant> {
  const text = Buffer.from(key).toString("utf8");
  const trimmed = text.trim();
  const variant = (secret: string | Uint8Array, explanation: string): Variant => ({
    cause: "secret_format",
    change: { secret: typeof secret === "string" ? Buffer.from(secret, "utf8") : secret },
    explanation,
  });
  if (trimmed !== text) {
    yield variant(trimmed, "The secret has whitespace or a newline around it, likely from pasting: remove it from the endpoint's secret.");
  }
  if (trimmed.startsWith(WHSEC)) {
    const rest = trimmed.slice(WHSEC.length);
    yield variant(rest, `${scheme.label} signs with the secret without its whsec_ prefix: enter it without whsec_.`);
    const decoded = decodeBase64(rest);
    if (decoded) yield variant(decoded, `The sender signs with the base64-decoded bytes after whsec_, as Standard Webhooks does, not with the secret's text as ${scheme.label} does: check the endpoint's provider.`);
  } else {
    yield variant(WHSEC + trimmed, `${scheme.label} signs with the secret as whsec_ followed by base64: enter it with its whsec_ prefix, as the provider shows it.`);
    const decoded = decodeBase64(trimmed);
    if (decoded) yield variant(decoded, `The sender signs with this secret's base64-decoded bytes, not its text: enter the secret exactly as the sender shows it (a Standard Webhooks secret keeps its whsec_ prefix).`);
  }
}

function* newlineVariants(scheme: ProviderScheme, body: Uint8Array): Generator<Variant> {
  if (body.length === 0 || body.length > MAX_NEWLINE_BYTES) return;
  const variant = (bytes: Uint8Array, what: string): Variant => ({
    cause: "body_newline_changed",
    change: { body: bytes },
    explanation: `The body's line endings changed after ${scheme.label} signed it (${what}): forward the raw bytes unchanged.`,
  });
  const text = Buffer.from(body);
  if (text.at(-1) === 0x0a) {
    const cut = text.at(-2) === 0x0d ? 2 : 1;
    yield variant(text.subarray(0, text.length - cut), "a trailing newline was added");
  } else {
    yield variant(Buffer.concat([text, Buffer.from("\n")]), "its trailing newline was removed");
  }
  const latin = text.toString("latin1");
  if (latin.includes("\r\n")) yield variant(Buffer.from(latin.replaceAll("\r\n", "\n"), "latin1"), "LF was turned into CRLF");
  else if (latin.includes("\n")) yield variant(Buffer.from(latin.replaceAll("\n", "\r\n"), "latin1"), "CRLF was turned into LF");
}

function* reserializedVariants(scheme: ProviderScheme, body: Uint8Array): Generator<Variant> {
  const value = parsedJson(body);
  if (value === undefined) return;
  const original = Buffer.from(body).toString("utf8");
  for (const indent of [0, 2, 4]) {
    const text = JSON.stringify(value, null, indent);
    if (text === original) continue;
    const signedAs = indent === 0 ? "minified" : `indented by ${indent} spaces`;
    yield {
      cause: "body_reserialized",
      change: { body: Buffer.from(text, "utf8") },
      explanation: `The body was re-serialized after it was signed: something between ${scheme.label} and this endpoint rewrote the JSON ${scheme.label} signed ${signedAs}; forward the raw bytes.`,
    };
  }
}

/** The body as a JSON value, when it is one of a size worth re-serializing. */
function parsedJson(body: Uint8Array): unknown {
  if (body.length === 0 || body.length > MAX_RESERIALIZE_BYTES) return undefined;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body)) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The URLs a sender may have signed instead of the one computed here: the other scheme, the
 * other trailing slash, a host a proxy reported, and without a path prefix a proxy added.
 * At most 13 URLs.
 */
function* urlVariants(trial: Trial): Generator<Variant> {
  const computed = parseUrl(trial.base.url);
  if (computed === undefined) return;
  const seen = new Set([computed.href]);
  for (const candidate of urlCandidates(computed, trial.base.headers)) {
    if (seen.has(candidate.href)) continue;
    seen.add(candidate.href);
    yield {
      cause: "url_mismatch",
      change: { url: candidate.href },
      explanation: `${trial.scheme.label} signed a different URL than the one computed here (${withoutQuery(computed)}): the signature matches ${withoutQuery(candidate)}; make the public ingest URL (WHC_INGEST_PUBLIC_URL) match the URL configured at ${trial.scheme.label}.`,
    };
  }
}

/**
 * A URL as a diagnosis names it: never its query, which may carry a sender's token and is
 * stored sealed (ADR 0009), while the diagnostic is stored in clear. Candidates differ in
 * scheme, host and path only.
 */
function withoutQuery(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function* urlCandidates(computed: URL, headers: SchemeVerifyInput["headers"]): Generator<URL> {
  const forwarded = [header(headers, "x-forwarded-host")?.split(",")[0]?.trim(), header(headers, "host")];
  const hosts = [computed.host, ...forwarded.filter((h): h is string => !!h)];
  const path = computed.pathname;
  const toggled = path.endsWith("/") ? path.slice(0, -1) || "/" : `${path}/`;
  for (const host of new Set(hosts)) {
    for (const protocol of [computed.protocol, computed.protocol === "https:" ? "http:" : "https:"]) {
      for (const pathname of [path, toggled]) {
        // Built from text: the `host` setter would keep the computed port when the new host has none.
        const url = parseUrl(`${protocol}//${host}${pathname}${computed.search}`);
        if (url !== undefined) yield url;
      }
    }
  }
  const segments = path.split("/").filter(Boolean);
  if (segments.length > 1) {
    const url = new URL(computed.href);
    url.pathname = `/${segments.slice(1).join("/")}`;
    yield url;
  }
}

function parseUrl(text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
