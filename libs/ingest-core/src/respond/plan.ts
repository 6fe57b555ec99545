import { FRAMING_HEADERS, type EndpointResponseConfig, type ResponseAnswer, type ResponseMatch, type ResponseSource } from "@whc/api-model";
import type { HeaderPair } from "@whc/signatures";
import { JSON_CONTENT_TYPE, TEXT_CONTENT_TYPE, utf8, type RenderedAnswer } from "./answer-types.js";
import { pathMatches } from "./path-glob.js";
import { createTemplateScope, renderBody, renderHeaderValue, type TemplateContext, type TemplateScope } from "./templates.js";

/**
 * What a receiving endpoint answers (design §10), as two pure steps: `planAnswer` picks which
 * configured answer applies (a rule, the sequence, or the endpoint's own fields) before the
 * commit; `resolveAnswer` fills in what that answer leaves out and renders its templates once
 * the commit has given the event its id. A sequence is the caller's to index: only the
 * catalog's commit knows how many captures came before.
 */

export interface PlanRequest {
  method: string;
  /** The sub-path after the webhookUrl with its query, as stored. */
  path: string;
  headers: readonly HeaderPair[];
  eventType: string;
}

export type PlanSource = Extract<ResponseSource, "default" | "rule" | "sequence">;

export interface AnswerPlan {
  source: PlanSource;
  /** The matching rule's answer fields (source `rule`). */
  answer?: ResponseAnswer;
  /** The configured sequence (source `sequence`): take `sequenceEntry(sequence, n)`. */
  sequence?: readonly ResponseAnswer[];
}

/** Every field of `match` holds; an empty match holds for every request. */
export function ruleMatches(match: ResponseMatch, req: PlanRequest): boolean {
  if (match.method !== undefined && match.method.toUpperCase() !== req.method.toUpperCase()) return false;
  if (match.path !== undefined && !pathMatches(match.path, req.path)) return false;
  if (match.eventType !== undefined && match.eventType !== req.eventType) return false;
  if (match.header !== undefined) {
    const { name, equals } = match.header;
    const wanted = name.toLowerCase();
    // Any copy of a repeated header may hold the value: a proxy may have appended one before the sender's.
    if (!req.headers.some(([n, v]) => n.toLowerCase() === wanted && v === equals)) return false;
  }
  return true;
}

/** The first matching rule, else the sequence, else the endpoint's top-level fields (`default`). */
export function planAnswer(config: EndpointResponseConfig | undefined, req: PlanRequest): AnswerPlan {
  for (const { match, ...answer } of config?.rules ?? []) {
    if (ruleMatches(match, req)) return { source: "rule", answer };
  }
  if (config?.sequence !== undefined && config.sequence.length > 0) return { source: "sequence", sequence: config.sequence };
  return { source: "default" };
}

/** Entry `n mod length`, n being the capture's count since the sequence was set (0 for the first). */
export function sequenceEntry(sequence: readonly ResponseAnswer[], n: number | bigint): ResponseAnswer | undefined {
  if (sequence.length === 0) return undefined;
  const length = BigInt(sequence.length);
  const index = ((BigInt(n) % length) + length) % length;
  return sequence[Number(index)];
}

/** Handshakes are on unless the endpoint says `handshakes: false`. */
export function handshakesEnabled(config: EndpointResponseConfig | undefined): boolean {
  return config?.handshakes !== false;
}

/** The built-in answer's headers: one frozen list for every capture, so sendAnswer prepares it once. */
const BUILT_IN_HEADERS = Object.freeze([Object.freeze(["content-type", JSON_CONTENT_TYPE])]) as unknown as [string, string][];

/** Today's answer to a stored capture, byte for byte what `reply(res, 200, { ok: true, id })` sends. */
export function builtInAnswer(eventId: string): RenderedAnswer {
  return { status: 200, headers: BUILT_IN_HEADERS, body: utf8(JSON.stringify({ ok: true, id: eventId })), delayMs: 0 };
}

/** Statuses that carry no content (RFC 9110 §15.3.5, §15.3.6, §15.4.5): a configured body is not sent with them. */
const NO_CONTENT_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);
const FRAMING: ReadonlySet<string> = new Set(FRAMING_HEADERS);

/**
 * The answer to send: each field of `answer` (a rule's or a sequence entry's), else the
 * endpoint's top-level field, else the built-in default. `headers` is one field: a rule that
 * sets headers replaces the endpoint's, it does not add to them.
 */
export function resolveAnswer(config: EndpointResponseConfig | undefined, answer: ResponseAnswer | undefined, ctx: TemplateContext): RenderedAnswer {
  const status = answer?.status ?? config?.status ?? 200;
  const delayMs = answer?.delayMs ?? config?.delayMs ?? 0;
  const template = answer?.body ?? config?.body;
  const configured = answer?.headers ?? config?.headers;
  if (template === undefined && configured === undefined && status === 200) return { ...builtInAnswer(ctx.eventId), delayMs };
  const scope = createTemplateScope(ctx);
  const headers = renderHeaders(configured ?? {}, scope);
  const body = bodyFor(status, template, ctx.eventId, scope);
  const contentType = headers.some(([name]) => name.toLowerCase() === "content-type") ? undefined : defaultContentType(template, body);
  return { status, headers: contentType === undefined ? headers : [["content-type", contentType], ...headers], body, delayMs };
}

function renderHeaders(configured: Readonly<Record<string, string>>, scope: TemplateScope): [string, string][] {
  const rendered: [string, string][] = [];
  for (const [name, value] of Object.entries(configured)) {
    // The schema refuses framing headers; one stored before that rule must still not reach writeHead.
    if (!FRAMING.has(name.toLowerCase())) rendered.push([name, renderHeaderValue(value, scope)]);
  }
  return rendered;
}

function bodyFor(status: number, template: string | undefined, eventId: string, scope: TemplateScope): Uint8Array {
  if (NO_CONTENT_STATUSES.has(status)) return new Uint8Array(0);
  return template === undefined ? builtInAnswer(eventId).body : renderBody(template, scope);
}

/**
 * The Content-Type of an answer whose headers set none. The built-in body is JSON. A configured
 * body that looks like a JSON object or array is sent as JSON: people paste `{"received":true}`
 * and expect a JSON answer, as HookSense and Beeceptor default to; anything else is plain UTF-8
 * text, as webhook.site-style tools send a typed-in body. An empty body has no type at all.
 * Sniffed by its first and last characters, not parsed: the request's JSON is the only JSON an
 * answer parses.
 */
function defaultContentType(template: string | undefined, body: Uint8Array): string | undefined {
  if (body.length === 0) return undefined;
  if (template === undefined) return JSON_CONTENT_TYPE;
  return looksLikeJson(body) ? JSON_CONTENT_TYPE : TEXT_CONTENT_TYPE;
}

function looksLikeJson(body: Uint8Array): boolean {
  const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  let first = 0;
  let last = body.length - 1;
  while (first < body.length && isSpace(body[first])) first += 1;
  while (last > first && isSpace(body[last])) last -= 1;
  const [open, close] = [body[first], body[last]];
  return (open === 0x7b && close === 0x7d) || (open === 0x5b && close === 0x5d);
}
