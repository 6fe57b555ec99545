import {
  BODY_KINDS as BODY_KIND_NAMES,
  CHECK_NAMES,
  HANDSHAKE_NAMES,
  LIKELY_CAUSES,
  MATCHED_SECRETS,
  RESPONSE_SOURCES,
  VERIFICATIONS,
  type BodyIs,
  type CheckName,
  type DiagnosticView,
  type HandshakeName,
  type LikelyCause,
  type ResponseSource,
  type Warning,
} from "@whc/api-model";
import { h } from "./dom.js";

/**
 * An event's `diagnostic` (design §12) as a person reads it. Older events carry only some of
 * its fields, so it is read field by field (readDiagnostic).
 */

/** Each likelyCause of design §12, and the title a person reads first. */
export const LIKELY_CAUSE_TITLES = {
  none: "No single cause stands out",
  header_missing: "The signature header is missing",
  header_malformed: "The signature header is malformed",
  wrong_scheme: "Signed with another provider's scheme",
  stale_timestamp: "The signature is too old",
  future_timestamp: "The signature is dated in the future",
  wrong_secret: "Signed with a different secret",
  secret_format: "The secret is not in the provider's format",
  body_reserialized: "The body was changed on the way",
  body_newline_changed: "A line ending in the body was changed on the way",
  url_mismatch: "Signed for a different URL",
} as const satisfies Record<LikelyCause, string>;

/** The checks the signature schemes run, in words; a check named otherwise shows its name. */
const CHECK_LABELS: Readonly<Record<string, string>> = {
  header_present: "signature header present",
  header_well_formed: "signature header well formed",
  signature_matches: "signature matches the body",
  timestamp_fresh: "timestamp within tolerance",
} satisfies Record<CheckName, string>;

/** The handshakes ingest answers (design §10), as "answered …" ends. */
const HANDSHAKE_TITLES: Readonly<Record<string, string>> = {
  slack_url_verification: "Slack's URL verification",
  zoom_url_validation: "Zoom's URL validation",
  asana_hook_secret: "Asana's hook secret handshake",
  meta_verify_token: "Meta's verify token challenge",
  x_crc: "X's CRC check",
  graph_validation_token: "Microsoft Graph's validation token",
  dropbox_challenge: "Dropbox's challenge",
} satisfies Record<HandshakeName, string>;

const BY_SOURCE: Record<ResponseSource, string> = {
  default: "as the endpoint's default",
  rule: "by a rule",
  sequence: "from the response sequence",
  handshake: "to a handshake",
  proxy: "with the forward target's answer",
  forward_failed: "because forwarding failed",
};

const BODY_KINDS: Readonly<Record<string, string>> = { json: "JSON", form: "form data", text: "text", binary: "binary", empty: "empty" } satisfies Record<BodyIs, string>;

type Verdict = (typeof VERIFICATIONS)[number];

/** The /v1 `diagnostic` (@whc/api-model's zod schema `diagnostic`), as its type. */
export type Diagnostic = DiagnosticView;
export type SignatureDiagnostic = NonNullable<DiagnosticView["signature"]>;

type Fields = Readonly<Record<string, unknown>>;

const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
/** A text worth showing: an empty one says nothing. */
const shown = (v: string | undefined): string | undefined => (v === "" ? undefined : v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);
const fields = (v: unknown): Fields | undefined => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Fields) : undefined);
/** A value of one of the schema's closed lists, else absent. */
const oneOf = <T extends string>(list: readonly T[], v: unknown): T | undefined => list.find((known) => known === v);

/** Keeps only the defined values, so that a read object has no key for what was absent. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function readChecks(v: unknown): SignatureDiagnostic["checks"] {
  if (!Array.isArray(v)) return undefined;
  const checks = v.flatMap((c) => {
    const f = fields(c);
    const name = oneOf(CHECK_NAMES, f?.name);
    return name !== undefined && typeof f?.ok === "boolean" ? [{ name, ok: f.ok }] : [];
  });
  return checks.length > 0 || v.length === 0 ? checks : undefined;
}

function readSignature(s: Fields): SignatureDiagnostic {
  return defined({
    provider: text(s.provider),
    header: text(s.header),
    verdict: oneOf(VERIFICATIONS, s.verdict),
    likelyCause: oneOf(LIKELY_CAUSES, s.likelyCause),
    explanation: text(s.explanation),
    skewSeconds: num(s.skewSeconds),
    toleranceSeconds: num(s.toleranceSeconds),
    matchedSecret: oneOf(MATCHED_SECRETS, s.matchedSecret),
    checks: readChecks(s.checks),
  });
}

/**
 * An event detail's `diagnostic` read as the /v1 schema types it, without loading zod into the
 * page's first chunk (ADR 0020): a field the schema would refuse (wrong type, a value outside
 * its list) counts as absent, and nothing absent is ever shown. diagnosis.test.ts holds this
 * reader to the schema: what the schema accepts reads the same.
 */
export function readDiagnostic(raw: Fields): Diagnostic {
  const signature = fields(raw.signature);
  const contentType = fields(raw.contentType);
  const declared = contentType?.declared === null ? null : text(contentType?.declared);
  return defined({
    bodySha256: text(raw.bodySha256),
    contentType: contentType
      ? defined({ declared, bodyIs: oneOf(BODY_KIND_NAMES, contentType.bodyIs), mismatch: bool(contentType.mismatch) })
      : undefined,
    signature: signature ? readSignature(signature) : undefined,
    handshake: oneOf(HANDSHAKE_NAMES, raw.handshake),
    responseSource: oneOf(RESPONSE_SOURCES, raw.responseSource),
  });
}

/** What the page shows, as text: every field is there only when there is something to say. */
export interface DiagnosisView {
  verdict?: Verdict;
  /** "Stripe · Stripe-Signature". */
  source?: string;
  cause?: { title: string; explanation?: string };
  /** "signed 412 s ago; Stripe accepts 300 s". */
  skew?: string;
  secret?: string;
  checks: { label: string; ok: boolean }[];
  /** "answered 500 by a rule", "answered Zoom's URL validation". */
  answer?: string;
  /** "declared application/json, body is form data". */
  contentType?: string;
  bodySha256?: string;
}

export interface DiagnosisContext {
  /** The status the capture was answered. */
  responseCode?: number;
  /** A provider's label ("Stripe") from GET /v1/providers; undefined shows its name. */
  providerLabel?: (name: string) => string | undefined;
}

const words = (name: string) => name.replaceAll("_", " ");

export function likelyCauseTitle(cause: string): string {
  return (LIKELY_CAUSE_TITLES as Readonly<Record<string, string>>)[cause] ?? words(cause);
}

function cause(s: SignatureDiagnostic): DiagnosisView["cause"] {
  // "none" on a verified or unchecked capture is not news; on a failed one it says we looked.
  if (s.verdict !== "failed" && (s.likelyCause === undefined || s.likelyCause === "none")) return undefined;
  if (s.likelyCause === undefined && !s.explanation) return undefined;
  return defined({ title: s.likelyCause === undefined ? "Why it failed" : likelyCauseTitle(s.likelyCause), explanation: shown(s.explanation) });
}

function skew(s: SignatureDiagnostic, provider: string | undefined): string | undefined {
  if (s.skewSeconds === undefined) return undefined;
  const seconds = Math.round(s.skewSeconds);
  const signed = seconds >= 0 ? `signed ${seconds} s ago` : `signed ${-seconds} s in the future`;
  return s.toleranceSeconds === undefined ? signed : `${signed}; ${provider ?? "the provider"} accepts ${Math.round(s.toleranceSeconds)} s`;
}

function answer(d: Diagnostic, code: number | undefined): string | undefined {
  const status = code !== undefined && code > 0 ? ` ${code}` : "";
  if (d.handshake !== undefined) return `answered ${HANDSHAKE_TITLES[d.handshake] ?? `the ${words(d.handshake)} handshake`}${status ? ` with${status}` : ""}`;
  if (d.responseSource === undefined) return undefined;
  const how = (BY_SOURCE as Readonly<Record<string, string>>)[d.responseSource] ?? `(${words(d.responseSource)})`;
  return `answered${status} ${how}`;
}

function contentType(c: Diagnostic["contentType"]): string | undefined {
  if (c?.mismatch !== true) return undefined;
  const declared = !c.declared ? "no Content-Type declared" : `declared ${c.declared}`;
  return c.bodyIs === undefined ? `${declared}, which the body does not match` : `${declared}, body is ${BODY_KINDS[c.bodyIs] ?? c.bodyIs}`;
}

/** The diagnosis in words: the mapping of design §12's fields, apart from any DOM. */
export function describeDiagnosis(d: Diagnostic, ctx: DiagnosisContext = {}): DiagnosisView {
  const s = d.signature ?? {};
  const provider = shown(s.provider) === undefined ? undefined : (ctx.providerLabel?.(s.provider as string) ?? s.provider);
  const source = [provider, shown(s.header) === undefined ? undefined : `read from ${s.header}`].filter((p) => p !== undefined).join(" · ");
  return defined({
    verdict: s.verdict,
    source: source || undefined,
    cause: cause(s),
    skew: skew(s, provider),
    secret: s.matchedSecret === "previous" ? "verified with the previous secret (rotation grace)" : undefined,
    checks: (s.checks ?? []).map((c) => ({ label: CHECK_LABELS[c.name] ?? words(c.name), ok: c.ok })),
    answer: answer(d, ctx.responseCode),
    contentType: contentType(d.contentType),
    bodySha256: shown(d.bodySha256),
  });
}

function line(testid: string, value: string | undefined, cls = "diag-line"): HTMLElement | null {
  return value === undefined ? null : h("p", { class: cls, "data-testid": testid }, value);
}

function verdictRow(v: DiagnosisView): HTMLElement | null {
  if (v.verdict === undefined && v.source === undefined) return null;
  return h(
    "div",
    { class: "verdict-row" },
    v.verdict === undefined ? null : h("span", { class: `verdict ${v.verdict}`, "data-testid": "diagnosis-verdict" }, v.verdict),
    v.source === undefined ? null : h("span", { class: "signature-source", "data-testid": "signature-source" }, v.source),
  );
}

function causeBlock(c: DiagnosisView["cause"]): HTMLElement | null {
  if (!c) return null;
  return h(
    "div",
    { class: "cause", "data-testid": "likely-cause" },
    h("strong", { "data-testid": "likely-cause-title" }, c.title),
    c.explanation === undefined ? null : h("p", { "data-testid": "explanation" }, c.explanation),
  );
}

function checkList(checks: DiagnosisView["checks"]): HTMLElement | null {
  if (!checks.length) return null;
  return h(
    "ul",
    { class: "checks", "data-testid": "checks" },
    ...checks.map((c) => h("li", { class: c.ok ? "ok" : "failed" }, h("span", { class: "mark" }, c.ok ? "✓" : "✗"), ` ${c.label}`)),
  );
}

function sha(value: string | undefined): HTMLElement | null {
  if (value === undefined) return null;
  return h("details", { class: "sha", "data-testid": "body-sha256" }, h("summary", {}, "Body SHA-256"), h("code", {}, value));
}

/** The diagnosis section of an event detail, or null when the diagnostic says nothing. */
export function diagnosisElement(raw: Fields, ctx: DiagnosisContext = {}): HTMLElement | null {
  const v = describeDiagnosis(readDiagnostic(raw), ctx);
  const parts = [
    verdictRow(v),
    causeBlock(v.cause),
    line("skew", v.skew),
    line("matched-secret", v.secret),
    checkList(v.checks),
    line("answer-source", v.answer),
    line("content-type", v.contentType, "diag-line warn"),
    sha(v.bodySha256),
  ].filter((p) => p !== null);
  if (!parts.length) return null;
  return h("section", { class: "diagnosis", "data-testid": "diagnosis" }, h("h3", {}, "Diagnosis"), ...parts);
}

/** The warnings of a cURL export or a replay (design §12), code and message; null when none. */
export function warningsElement(warnings: readonly Warning[] | undefined, testid: string): HTMLElement | null {
  if (!warnings?.length) return null;
  return h("ul", { class: "warnings", "data-testid": testid }, ...warnings.map((w) => h("li", {}, h("code", {}, w.code), ` ${w.message}`)));
}
