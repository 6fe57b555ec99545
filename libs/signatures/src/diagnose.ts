import { detectProvider } from "./detect.js";
import { attempt, signatureMatches, variants, type Trial } from "./diagnose-variants.js";
import { hasHeader, type HeaderPair } from "./headers.js";
import { unixSeconds } from "./outcome.js";
import { DEFAULT_GENERIC_HEADER } from "./providers/generic.js";
import { providers, providerScheme, type Provider } from "./registry.js";
import type { ProviderScheme, SchemeVerifyInput, SignatureOptions, VerifyCheck, VerifyOutcome } from "./scheme.js";

/** Why a signature failed, most specific first; `none` when nothing failed (design §12). */
import { LIKELY_CAUSES, type LikelyCause, type MatchedSecret, type SignatureDiagnosticJson } from "@whc/api-model";
export { LIKELY_CAUSES, type LikelyCause, type MatchedSecret };

export type SignatureVerdict = "verified" | "failed" | "unverified";

/** The plain check as ingest made it: the outcome of the secret that matched, else the current secret's. */
export interface PlainVerification {
  outcome: VerifyOutcome;
  matchedSecret: MatchedSecret;
}

export interface DiagnoseInput extends SignatureOptions {
  /** The effective provider, by name or scheme. */
  provider: Provider | ProviderScheme;
  headers: readonly HeaderPair[];
  body: Uint8Array;
  url?: string | undefined;
  /** The endpoint's current secret as typed; absent or empty when it has none (unverified). */
  secret?: Uint8Array | undefined;
  previousSecret?: Uint8Array | undefined;
  /** When the previous secret stops being accepted. */
  previousValidUntilMs?: number | undefined;
  nowMs: number;
  toleranceS?: number | undefined;
  /** False when the body was cut off at the inbound limit: its signature is not judged. */
  complete?: boolean | undefined;
  /** False: an unverified signature's age is not read (ingest's hot path; a reader can diagnose again). */
  timestampOfUnverified?: boolean | undefined;
  /** The plain check ingest already made; computed here (verifyWithSecrets) when absent. */
  plain?: PlainVerification | undefined;
}

/** The `signature` object of an event's diagnostic (design §12), as /v1 defines it. */
export type SignatureDiagnosis = SignatureDiagnosticJson;

interface Finding {
  likelyCause: LikelyCause;
  explanation: string;
}

/**
 * Explains a capture's signature. Nothing beyond the plain check runs unless it failed; then
 * the scheme's own verify is tried on near misses of the secret, body and URL, and the first
 * one that matches names the cause. Pure: never throws on what a sender sent.
 */
export function diagnoseSignature(input: DiagnoseInput): SignatureDiagnosis {
  const scheme = schemeOf(input.provider);
  const header = signatureHeader(scheme, input);
  const tolerance = toleranceOf(scheme, input);
  // Reading an unjudged signature's timestamp costs a whole verify: only when the caller wants it.
  if ((!hasSecret(input.secret) || input.complete === false) && input.timestampOfUnverified === false) {
    return unjudged(scheme, header, tolerance, input.complete === false);
  }
  const base = baseOf(scheme, header, tolerance);
  if (!hasSecret(input.secret) || input.complete === false) {
    const skew = skewOf(readTimestamp(scheme, input), input.nowMs);
    return { ...base, ...skew, ...unverified(scheme, input), matchedSecret: "none", checks: [] };
  }
  const plain = input.plain ?? plainCheck(scheme, input);
  if (plain.outcome.verification === "verified" || plain.matchedSecret !== "none") {
    return verified(scheme, header, tolerance, input, plain);
  }
  const skew = skewOf(plain.outcome.signedAtS, input.nowMs);
  const finding = failureFinding(scheme, input, plain.outcome, skew.skewSeconds, tolerance);
  return { ...base, ...skew, verdict: "failed", ...finding, matchedSecret: "none", checks: plain.outcome.checks };
}

/** The plain check ingest makes: the current secret, then the previous one while its grace lasts. */
export function verifyWithSecrets(input: DiagnoseInput): PlainVerification {
  return plainCheck(schemeOf(input.provider), input);
}

const schemeOf = (provider: Provider | ProviderScheme) => (typeof provider === "string" ? providerScheme(provider) : provider);

function plainCheck(scheme: ProviderScheme, input: DiagnoseInput): PlainVerification {
  const outcome = scheme.verify(schemeInput(input, input.secret ?? new Uint8Array()));
  if (outcome.verification === "verified") return { outcome, matchedSecret: "current" };
  const previous = previousInGrace(input);
  if (previous !== undefined) {
    const again = scheme.verify(schemeInput(input, previous));
    if (again.verification === "verified") return { outcome: again, matchedSecret: "previous" };
  }
  return { outcome, matchedSecret: "none" };
}

function schemeInput(input: DiagnoseInput, secret: Uint8Array): SchemeVerifyInput {
  const { headers, body, url, nowMs, toleranceS, genericSignatureHeader, genericSignaturePrefix } = input;
  return { headers, body, url, nowMs, toleranceS, genericSignatureHeader, genericSignaturePrefix, secret };
}

const hasSecret = (secret: Uint8Array | undefined): secret is Uint8Array => secret !== undefined && secret.length > 0;

function previousInGrace(input: DiagnoseInput): Uint8Array | undefined {
  const { previousSecret, previousValidUntilMs, nowMs } = input;
  return hasSecret(previousSecret) && previousValidUntilMs !== undefined && nowMs < previousValidUntilMs ? previousSecret : undefined;
}

/**
 * The header to name: the configured one for generic, else the scheme's signature header that
 * arrived, preferring the one holding the signature over companions such as an id or timestamp.
 */
function signatureHeader(scheme: ProviderScheme, input: DiagnoseInput): string {
  if (scheme.name === "generic") return input.genericSignatureHeader?.trim() || DEFAULT_GENERIC_HEADER;
  const preferred = preferredHeaders(scheme);
  return preferred.find((name) => hasHeader(input.headers, name)) ?? preferred[0] ?? "";
}

const preferredOrder = new WeakMap<ProviderScheme, readonly string[]>();

/** The scheme's headers, the ones holding a signature first; worked out once per scheme. */
function preferredHeaders(scheme: ProviderScheme): readonly string[] {
  let preferred = preferredOrder.get(scheme);
  if (preferred === undefined) {
    const names = scheme.signatureHeaders;
    preferred = [...names.filter((name) => /sign|hmac/i.test(name)), ...names];
    preferredOrder.set(scheme, preferred);
  }
  return preferred;
}

function toleranceOf(scheme: ProviderScheme, input: DiagnoseInput): number | undefined {
  if (scheme.toleranceS === undefined) return undefined;
  const override = input.toleranceS;
  return override !== undefined && Number.isFinite(override) && override >= 0 ? override : scheme.toleranceS;
}

function skewOf(signedAtS: number | undefined, nowMs: number): { skewSeconds?: number } {
  return signedAtS === undefined ? {} : { skewSeconds: unixSeconds(nowMs) - signedAtS };
}

/**
 * Without a secret nothing is judged, but a timed scheme still reads its timestamp when checked
 * with an empty key: the skew lets a later exact replay warn that the signature is stale.
 */
function readTimestamp(scheme: ProviderScheme, input: DiagnoseInput): number | undefined {
  if (scheme.toleranceS === undefined) return undefined;
  try {
    return scheme.verify(schemeInput(input, new Uint8Array())).signedAtS;
  } catch {
    return undefined;
  }
}

/** What every diagnosis starts with: the scheme, its header and, for a timed scheme, its tolerance. */
function baseOf(scheme: ProviderScheme, header: string, tolerance: number | undefined): { provider: string; header: string; toleranceSeconds?: number } {
  return tolerance === undefined ? { provider: scheme.name, header } : { provider: scheme.name, header, toleranceSeconds: tolerance };
}

const unjudgedCache = new WeakMap<ProviderScheme, Map<string, SignatureDiagnosis>>();

/**
 * The diagnosis of a signature nobody judged (no secret, or a cut-off body), without its
 * timestamp: the same for every capture of one provider, header and tolerance, so it is made
 * once and shared, frozen. This is ingest's most common case, and it runs on every capture.
 */
function unjudged(scheme: ProviderScheme, header: string, tolerance: number | undefined, cutOff: boolean): SignatureDiagnosis {
  // The last one asked for first: a sender's captures ask for the same one, one after another,
  // and the key below is a string made and hashed per capture.
  const last = lastUnjudged;
  if (last !== undefined && last.scheme === scheme && last.header === header && last.tolerance === tolerance && last.cutOff === cutOff) return last.found;
  const key = `${header}\n${tolerance ?? ""}\n${cutOff ? 1 : 0}`;
  const cache = unjudgedCache.get(scheme) ?? unjudgedCache.set(scheme, new Map()).get(scheme)!;
  let found = cache.get(key);
  if (found === undefined) {
    found = Object.freeze({ ...baseOf(scheme, header, tolerance), ...unverified(scheme, { complete: !cutOff }), matchedSecret: "none" as const, checks: Object.freeze([]) as unknown as VerifyCheck[] });
    // Keys come from the registry's names and headers and a tolerance; bounded all the same.
    if (cache.size < 1024) cache.set(key, found);
  }
  lastUnjudged = { scheme, header, tolerance, cutOff, found };
  return found;
}

let lastUnjudged: { scheme: ProviderScheme; header: string; tolerance: number | undefined; cutOff: boolean; found: SignatureDiagnosis } | undefined;

/**
 * A verified signature's diagnosis. A sender's signatures, once verified, mostly read the same
 * as the last one (the same scheme, header, secret and checks, signed within the same second
 * before arriving): then the last diagnosis is answered, shared and frozen, so the capture's
 * diagnostic is not made again (design §20). Anything that differs makes a new one.
 */
function verified(scheme: ProviderScheme, header: string, tolerance: number | undefined, input: DiagnoseInput, plain: PlainVerification): SignatureDiagnosis {
  const matchedSecret = plain.matchedSecret === "none" ? "current" : plain.matchedSecret;
  const { signedAtS, checks } = plain.outcome;
  const skewSeconds = signedAtS === undefined ? undefined : unixSeconds(input.nowMs) - signedAtS;
  // The previous secret's explanation names when its grace ends; the current one's names nothing.
  const graceUntil = matchedSecret === "previous" ? input.previousValidUntilMs : undefined;
  const last = lastVerified;
  if (
    last !== undefined &&
    last.scheme === scheme &&
    last.header === header &&
    last.tolerance === tolerance &&
    last.skewSeconds === skewSeconds &&
    last.matchedSecret === matchedSecret &&
    last.graceUntil === graceUntil &&
    sameChecks(last.found.checks, checks)
  ) {
    return last.found;
  }
  const skew = skewSeconds === undefined ? {} : { skewSeconds };
  const found: SignatureDiagnosis = Object.freeze({
    ...baseOf(scheme, header, tolerance),
    ...skew,
    verdict: "verified" as const,
    ...verifiedFinding(scheme, input, matchedSecret),
    matchedSecret,
    checks: Object.freeze(checks.map((check) => Object.freeze({ ...check }))) as unknown as VerifyCheck[],
  });
  lastVerified = { scheme, header, tolerance, skewSeconds, matchedSecret, graceUntil, found };
  return found;
}

let lastVerified:
  | { scheme: ProviderScheme; header: string; tolerance: number | undefined; skewSeconds: number | undefined; matchedSecret: MatchedSecret; graceUntil: number | undefined; found: SignatureDiagnosis }
  | undefined;

function sameChecks(kept: readonly VerifyCheck[], checks: readonly VerifyCheck[]): boolean {
  if (kept.length !== checks.length) return false;
  for (let i = 0; i < checks.length; i += 1) {
    const a = kept[i]!;
    const b = checks[i]!;
    if (a.name !== b.name || a.ok !== b.ok) return false;
  }
  return true;
}

function unverified(scheme: ProviderScheme, input: Pick<DiagnoseInput, "complete">): Finding & { verdict: SignatureVerdict } {
  const explanation =
    input.complete === false
      ? "The body was cut off at the inbound size limit, so its signature was not checked; raise the limit to verify bodies this large."
      : `This endpoint has no secret, so the signature was not checked; set ${scheme.label}'s signing secret on the endpoint to verify captures.`;
  return { verdict: "unverified", likelyCause: "none", explanation };
}

function verifiedFinding(scheme: ProviderScheme, input: DiagnoseInput, matched: MatchedSecret): Finding {
  if (matched === "current") return { likelyCause: "none", explanation: `The signature verified with the endpoint's current secret.` };
  const until = input.previousValidUntilMs === undefined ? "" : ` until ${new Date(input.previousValidUntilMs).toISOString()}`;
  return {
    likelyCause: "none",
    explanation: `The signature verified with the previous secret, accepted${until} only: ${scheme.label} still signs with it, so switch it to the current secret before then.`,
  };
}

function failureFinding(scheme: ProviderScheme, input: DiagnoseInput, outcome: VerifyOutcome, skew: number | undefined, tolerance: number | undefined): Finding {
  const failed = outcome.checks.find((check) => !check.ok)?.name;
  if (failed === "header_present" || failed === "header_well_formed") return otherScheme(scheme, input) ?? headerFinding(scheme, input, failed);
  if (signatureMatches(outcome)) return timestampFinding(scheme, skew, tolerance);
  return secretKindFinding(scheme, input.secret) ?? variantFinding(scheme, input) ?? wrongSecret(scheme);
}

/** The configured scheme found no signature of its own, and another registered provider's headers arrived. */
function otherScheme(scheme: ProviderScheme, input: DiagnoseInput): Finding | undefined {
  const detected = detectProvider(input.headers);
  if (detected === undefined || detected === scheme.name) return undefined;
  const other = providers[detected];
  return {
    likelyCause: "wrong_scheme",
    explanation: `These headers are ${other.label}'s, not ${scheme.label}'s: set the endpoint's provider to ${other.label} (${detected}) or point ${other.label} at the endpoint meant for it.`,
  };
}

function headerFinding(scheme: ProviderScheme, input: DiagnoseInput, failed: "header_present" | "header_well_formed"): Finding {
  const name = signatureHeader(scheme, input);
  const generic = scheme.name === "generic";
  if (failed === "header_present") {
    const fix = generic ? "set the endpoint's signature header to the one the sender signs in" : `check that ${scheme.label} signs these requests and that no proxy strips the header`;
    return { likelyCause: "header_missing", explanation: `No ${name} header arrived, so there was no signature to check: ${fix}.` };
  }
  const fix = generic ? "check the endpoint's signature prefix" : `check that the sender is ${scheme.label} and that nothing rewrites the header`;
  return { likelyCause: "header_malformed", explanation: `The ${name} header is not in ${scheme.label}'s format (${scheme.signs}): ${fix}.` };
}

function timestampFinding(scheme: ProviderScheme, skew: number | undefined, tolerance: number | undefined): Finding {
  const window = tolerance === undefined ? "" : ` beyond ${scheme.label}'s ${tolerance} s tolerance`;
  if (skew !== undefined && skew < 0) {
    return {
      likelyCause: "future_timestamp",
      explanation: `The signature is dated ${-skew} s in the future,${window}: the sender's clock or this server's is wrong; synchronize it (NTP).`,
    };
  }
  const age = skew === undefined ? "too long" : `${skew} s`;
  return {
    likelyCause: "stale_timestamp",
    explanation: `The signature was made ${age} before it arrived,${window}: the delivery was delayed or replayed, or this server's clock is behind; have ${scheme.label} resend the event, or replay it with mode resign.`,
  };
}

/** API keys that people paste where a `whsec_` webhook secret belongs; only the prefix is ever shown. */
const WRONG_KINDS: readonly { pattern: RegExp; kind: string }[] = [
  { pattern: /^(sk|rk)_(test|live)_/, kind: "a secret or restricted API key" },
  { pattern: /^pk_(test|live)_/, kind: "a publishable API key" },
];

function secretKindFinding(scheme: ProviderScheme, secret: Uint8Array | undefined): Finding | undefined {
  if (secret === undefined || !scheme.secretFormat.example?.startsWith("whsec_")) return undefined;
  const text = Buffer.from(secret).toString("utf8").trim();
  const wrong = WRONG_KINDS.find(({ pattern }) => pattern.test(text));
  const prefix = wrong === undefined ? undefined : wrong.pattern.exec(text)?.[0];
  if (wrong === undefined || prefix === undefined) return undefined;
  return {
    likelyCause: "secret_format",
    explanation: `The secret configured is ${wrong.kind} (${prefix}…), not ${scheme.label}'s webhook signing secret: use the endpoint's signing secret, which starts with whsec_.`,
  };
}

function variantFinding(scheme: ProviderScheme, input: DiagnoseInput): Finding | undefined {
  const keys = [input.secret, previousInGrace(input)].filter(hasSecret);
  const trial: Trial = { scheme, base: schemeInput(input, keys[0] ?? new Uint8Array()), keys, attempts: 0, urlRead: false };
  for (const variant of variants(trial)) {
    if (attempt(trial, variant.change)) return { likelyCause: variant.cause, explanation: variant.explanation };
  }
  return undefined;
}

function wrongSecret(scheme: ProviderScheme): Finding {
  const format = scheme.secretFormat.description.replace(/\.$/, "");
  return {
    likelyCause: "wrong_secret",
    explanation: `The signature does not match this endpoint's secret, nor any whitespace, prefix, body or URL variant of it: set the secret ${scheme.label} signs with (${format}).`,
  };
}
