import type { IncomingMessage, ServerResponse } from "node:http";
import type { CapturedEvent } from "@whc/contracts";
import type { CapturedRequest } from "@whc/sealing";
import type { IngestEndpoint } from "./endpoint-cache.js";
import type { Reservation } from "./budget.js";
import { originalSize, rawHeaderPairs, type ReadBody } from "./request.js";
import { hash } from "node:crypto";
import { bodyKind } from "@whc/signatures";
import type { DiagnosticJson, HandshakeName, ResponseSource } from "@whc/api-model";
import { verifyCapture } from "./verify.js";
import { redact, redactedAny, type Redactor } from "./redact.js";
import { bodyShapeText } from "./body-shape.js";

/** One capture in progress. */
export interface Capture {
  req: IncomingMessage;
  res: ServerResponse;
  url: string;
  endpointId: string;
  rest: string;
  /** performance.now() at arrival. */
  startedMs: number;
  /** The sender waits for `100 Continue` before sending its body. */
  expectsContinue: boolean;
  /** Its share of the in-flight budget, once admitted. */
  reservation?: Reservation;
  /** The sender's address (remoteIpOf: X-Forwarded-For only from trusted proxies). */
  remoteIp: string;
}

const NONE = new Uint8Array(0);

/**
 * What a capture stores, judged (signature, provider, event type) on every byte that arrived,
 * built once as the message the catalog appends (ADR 0011). Id and commit time are the
 * catalog's to give. Its headers, sub-path and query are `request`, sealed with the body
 * (withSealedParts, ADR 0009); `keepsBody` says whether a body is stored.
 */
export function captureEvent(
  c: Capture,
  { endpoint, secret, previousSecret }: IngestEndpoint,
  body: ReadBody,
  options: { secretGraceMs: number; publicUrl: string; learnSchemas?: boolean | undefined },
): { capture: CapturedEvent; keepsBody: boolean; request: CapturedRequest; diagnosis: CaptureDiagnosis } {
  const { req } = c;
  const headers = rawHeaderPairs(req);
  const rotatedAt = endpoint.secretRotatedAtMs;
  const verified = verifyCapture({
    provider: endpoint.provider,
    headers,
    body: body.whole,
    url: options.publicUrl + c.url,
    complete: !body.overLimit,
    secret,
    previousSecret,
    previousValidUntilMs: rotatedAt === undefined ? undefined : Number(rotatedAt) + options.secretGraceMs,
    genericSignatureHeader: endpoint.genericSignatureHeader,
    genericSignaturePrefix: endpoint.genericSignaturePrefix,
    nowMs: Date.now(),
  });
  const keepsBody = endpoint.operatingMode !== "metadata_only" && !body.overLimit;
  const contentType = bodyKind(req.headers["content-type"], body.whole);
  const capture: CapturedEvent = {
    $typeName: "webhookcapture.catalog.v1.CapturedEvent",
    accountId: endpoint.accountId,
    endpointId: c.endpointId,
    method: req.method ?? "GET",
    remoteIp: c.remoteIp,
    canonicalEventType: verified.canonicalEventType,
    provider: verified.provider,
    verification: verified.verification,
    verificationFailureReason: verified.failureReason,
    responseCode: body.overLimit ? 413 : 200,
    truncated: keepsBody && body.total > body.kept.length,
    originalSizeBytes: BigInt(originalSize(req, body)),
    wrappedKey: NONE,
    keyId: "",
    sealedRequest: NONE,
    body: undefined,
    searchTokens: NONE,
    diagnosticJson: "",
    forwardedResponseJson: "",
    sequenceStatuses: [],
    forwardTarget: "",
    forwardScheduled: false,
    redactionsJson: "",
    // The shape of the body as sent (before redaction: a path's type is the sender's, and no
    // value is read), for the catalog to learn from after the commit (design §19, ADR 0090).
    bodyShape: keepsBody && options.learnSchemas !== false && contentType.bodyIs === "json" ? bodyShapeText(body.whole) : "",
    deliveries: [],
    dedupeKey: NONE,
    dedupeWindowMs: 0n,
  };
  const diagnosis: CaptureDiagnosis = {
    // Only when the bytes stored are not the bytes received (cut, or not kept): otherwise the
    // API hashes the stored body when it shows the event (design §20, docs/design.md §12).
    bodySha256: keepsBody && !capture.truncated ? undefined : hash("sha256", body.whole, "hex"),
    contentType,
    signature: verified.signature,
  };
  return { capture, keepsBody, request: { path: c.rest, headers }, diagnosis };
}

/**
 * Replaces what the endpoint redacts (design §16, ADR 0045) in what is stored: after the
 * signature was judged on the bytes as sent (captureEvent), before sealing and indexing. The
 * body is redacted whole, then cut to `keep` bytes, so a value is never half kept at the cut.
 * The capture records the counts; its body hash becomes the stored bytes' (a hash of the
 * original would let whoever reads it test guesses of a redacted card number). Without a match
 * the request and body come back as they were.
 */
export function redactCapture(
  r: Redactor,
  capture: CapturedEvent,
  diagnosis: CaptureDiagnosis,
  request: CapturedRequest,
  whole: Buffer | undefined,
  keep: number,
): { request: CapturedRequest; body: Buffer | undefined } {
  const out = redact(r, request.headers, whole);
  const cut = (b: Buffer | undefined) => (b && b.length > keep ? b.subarray(0, keep) : b);
  if (!redactedAny(out.counts)) return { request, body: cut(whole) };
  capture.redactionsJson = JSON.stringify(out.counts);
  if (out.body && out.body !== whole) {
    capture.truncated = out.body.length > keep;
    // Stored whole, the API hashes what is stored; cut, the redacted body's hash is kept here.
    // Never the original's: it would let whoever reads it test guesses of what was redacted.
    diagnosis.bodySha256 = capture.truncated ? hash("sha256", out.body, "hex") : undefined;
  }
  return { request: { path: request.path, headers: out.headers }, body: cut(out.body) };
}

/**
 * What ingest learned of a capture before answering it (design §12); the answer adds its source
 * (diagnosticJson). `bodySha256` is undefined when the stored body is the bytes received (or
 * what redaction made of them, whole): the API computes it from the stored body when it shows
 * the event, instead of every capture hashing its body on the answer path (design §20).
 */
export type CaptureDiagnosis = Pick<DiagnosticJson, "contentType" | "signature"> & { bodySha256: string | undefined };

/** The JSON of shared, frozen values (a signature nobody judged, a content type: @whc/signatures shares them). */
const sharedJson = new WeakMap<object, string>();

function jsonOf(value: object): string {
  if (!Object.isFrozen(value)) return JSON.stringify(value);
  let text = sharedJson.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    sharedJson.set(value, text);
  }
  return text;
}

/**
 * The stored `diagnostic`: what was learned, how the capture was answered and why. The text
 * JSON.stringify gives the DiagnosticJson object, keys in its order, written out: this runs on
 * every capture, and the parts that are most often shared frozen objects (the signature's, one
 * per provider when nobody judged it; the content type's, the last one kept) are stringified
 * once (design §20).
 */
export function diagnosticJson(diagnosis: CaptureDiagnosis, responseSource: ResponseSource, handshake?: HandshakeName): string {
  const { bodySha256, contentType, signature } = diagnosis;
  // A sender's captures mostly repeat the last one's diagnostic whole (no hash of their own, the
  // same shared content type and signature parts): then it is the same text, already flat.
  const l = lastDiagnostic;
  if (bodySha256 === undefined && contentType === l.contentType && signature === l.signature && responseSource === l.responseSource && handshake === l.handshake) {
    return l.text;
  }
  const handshakePart = handshake ? `,"handshake":${JSON.stringify(handshake)}` : "";
  const hashPart = bodySha256 === undefined ? "" : `"bodySha256":${JSON.stringify(bodySha256)},`;
  const text = `{${hashPart}"contentType":${jsonOf(contentType)},"signature":${jsonOf(signature)}${handshakePart},"responseSource":${JSON.stringify(responseSource)}}`;
  if (bodySha256 === undefined && Object.isFrozen(contentType) && Object.isFrozen(signature)) {
    lastDiagnostic = { contentType, signature, responseSource, handshake, text };
  }
  return text;
}

/** The last diagnostic made only of shared, frozen parts, and its text. */
let lastDiagnostic: { contentType: object | undefined; signature: object | undefined; responseSource: ResponseSource | undefined; handshake: HandshakeName | undefined; text: string } = {
  contentType: undefined,
  signature: undefined,
  responseSource: undefined,
  handshake: undefined,
  text: "",
};
