import type { ServerResponse } from "node:http";
import type { CapturedEvent } from "@whc/contracts";
import { EVENT_ID_HEADER, withUntrustedContentHeaders, type ResponseSource } from "@whc/api-model";
import type { HeaderPair } from "@whc/signatures";
import { diagnosticJson, type CaptureDiagnosis } from "./capture.js";
import type { IngestEndpoint } from "./endpoint-cache.js";
import type { RenderedAnswer } from "./respond/answer-types.js";
import { findHandshake, type HandshakeName } from "./respond/handshakes.js";
import { builtInAnswer, handshakesEnabled, planAnswer, resolveAnswer, sequenceEntry, type AnswerPlan } from "./respond/plan.js";

/**
 * What a stored capture will be answered (docs/design.md §10), decided before the commit so
 * the event records the status it gets; only a sequence's entry waits for the commit, which
 * gives the capture its place in the sequence.
 */
export interface ReplyPlan {
  source: Extract<ResponseSource, "default" | "rule" | "sequence" | "handshake">;
  handshake?: { name: HandshakeName; answer: RenderedAnswer };
  plan: AnswerPlan;
}

export interface ReplyRequest {
  method: string;
  path: string;
  headers: readonly HeaderPair[];
  /** The whole body; empty when it was cut off at the inbound limit. */
  body: Uint8Array;
  eventType: string;
}

export function planReply(found: IngestEndpoint, req: ReplyRequest): ReplyPlan {
  const handshake = handshakesEnabled(found.response) ? findHandshake(req, found.secret) : undefined;
  if (handshake) return { source: "handshake", handshake, plan: { source: "default" } };
  const plan = planAnswer(found.response, req);
  return { source: plan.source, plan };
}

/** Records the plan on the capture: the status it will be answered, or the sequence's statuses for the catalog to pick from. */
export function recordPlan(event: CapturedEvent, found: IngestEndpoint, reply: ReplyPlan, diagnosis: CaptureDiagnosis): void {
  const config = found.response;
  if (reply.handshake) event.responseCode = reply.handshake.answer.status;
  else if (reply.plan.sequence) event.sequenceStatuses = reply.plan.sequence.map((entry) => entry.status ?? config?.status ?? 200);
  else event.responseCode = reply.plan.answer?.status ?? config?.status ?? 200;
  event.diagnosticJson = diagnosticJson(diagnosis, reply.source, reply.handshake?.name);
}

/** The answer itself, once the commit gave the event its id, time and (for a sequence) its place. */
export function renderReply(
  found: IngestEndpoint,
  reply: ReplyPlan,
  stored: { id: string; receivedAtMs: number; sequenceIndex: number },
  req: ReplyRequest,
): RenderedAnswer {
  if (reply.handshake) return reply.handshake.answer;
  if (!found.response) return builtInAnswer(stored.id);
  const answer = reply.plan.sequence ? sequenceEntry(reply.plan.sequence, stored.sequenceIndex) : reply.plan.answer;
  return resolveAnswer(found.response, answer, { eventId: stored.id, receivedAtMs: stored.receivedAtMs, path: req.path, headers: req.headers, body: req.body });
}

let preparedFor: RenderedAnswer["headers"] | undefined;
let prepared: string[] = [];

/**
 * An answer's headers with the untrusted-content ones, flat as writeHead takes them. A frozen
 * list (the built-in answer's, the same for every capture) is prepared once and reused.
 */
function headerFields(headers: RenderedAnswer["headers"]): string[] {
  if (headers === preparedFor) return prepared;
  const fields = withUntrustedContentHeaders(headers).flat();
  if (Object.isFrozen(headers)) {
    preparedFor = headers;
    prepared = fields;
  }
  return fields;
}

/**
 * Writes the answer; framing is the server's. A header Node refuses falls back to the built-in
 * answer. The body may be the tenant's configured bytes or echo the sender's: never a page
 * of the webhook origin (design §14).
 */
export function sendAnswer(res: ServerResponse, answer: RenderedAnswer, eventId: string): boolean {
  const body = answer.body;
  try {
    res.writeHead(answer.status, [...headerFields(answer.headers), EVENT_ID_HEADER, eventId, "content-length", String(body.length)]);
  } catch {
    const fallback = builtInAnswer(eventId);
    res.writeHead(fallback.status, [...headerFields(fallback.headers), EVENT_ID_HEADER, eventId, "content-length", String(fallback.body.length)]);
    endWith(res, fallback.body);
    return false;
  }
  endWith(res, body);
  return true;
}

/** Below this, an answer's body goes to Node as a latin1 string of its bytes (endWith). */
const AS_TEXT_BELOW = 16 * 1024;

/**
 * Ends the answer with `body`, byte for byte. A small one as a latin1 string (one character per
 * byte, so exactly its bytes): Node then writes the header block and the body as one string in
 * one write, where bytes go beside the header through the stream's cork and writev path.
 */
function endWith(res: ServerResponse, body: Uint8Array): void {
  if (body.length < AS_TEXT_BELOW) res.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("latin1"), "latin1");
  else res.end(body);
}
