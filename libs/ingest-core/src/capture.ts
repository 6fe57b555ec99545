import type { IncomingMessage, ServerResponse } from "node:http";
import type { Event } from "@whc/contracts";
import type { CapturedRequest, SealedCapture } from "@whc/sealing";
import type { IngestEndpoint } from "./endpoint-cache.js";
import type { Reservation } from "./budget.js";
import { originalSize, rawHeaderPairs, remoteIpOf, type ReadBody } from "./request.js";
import { hash } from "node:crypto";
import { bodyKind, type ContentTypeDiagnosis } from "@whc/signatures";
import { verifyCapture, type VerifyResult } from "./verify.js";

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
}

/**
 * The event a capture stores, judged (signature, provider, event type) on every byte that
 * arrived. Id and commit time are the catalog's to give. Its headers, sub-path and query are
 * not on the event: they are `request`, sealed with the body (withSealedCapture, ADR 0009).
 */
export function captureEvent(
  c: Capture,
  { endpoint, secret, previousSecret }: IngestEndpoint,
  body: ReadBody,
  options: { trustedProxies: ReadonlySet<string>; secretGraceMs: number; publicUrl: string },
): { event: Event; request: CapturedRequest; diagnosis: CaptureDiagnosis } {
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
  const storeBody = endpoint.operatingMode !== "metadata_only" && !body.overLimit;
  const event: Event = {
    $typeName: "webhookcapture.catalog.v1.Event",
    id: "",
    accountId: endpoint.accountId,
    endpointId: c.endpointId,
    receivedAtMs: 0n,
    method: req.method ?? "GET",
    path: "",
    headers: [],
    remoteIp: remoteIpOf(req, options.trustedProxies),
    canonicalEventType: verified.canonicalEventType,
    provider: verified.provider,
    verification: verified.verification,
    verificationFailureReason: verified.failureReason,
    responseCode: body.overLimit ? 413 : 200,
    truncated: storeBody && body.total > body.kept.length,
    originalSizeBytes: BigInt(originalSize(req, body)),
    bodyStored: storeBody,
    searchTokens: [],
    diagnosticJson: "",
    forwardedResponseJson: "",
    sequenceStatuses: [],
    forwardScheduled: false,
  };
  const diagnosis: CaptureDiagnosis = {
    bodySha256: hash("sha256", body.whole, "hex"),
    contentType: bodyKind(req.headers["content-type"], body.whole),
    signature: verified.signature,
  };
  return { event, request: { path: c.rest, headers }, diagnosis };
}

/** What ingest learned of a capture before answering it (design §12); the answer adds its source. */
export interface CaptureDiagnosis {
  bodySha256: string;
  contentType: ContentTypeDiagnosis;
  signature: VerifyResult["signature"];
}

/** The sealed request and forward target, and the body with its search tokens when one is stored. */
export function withSealedCapture(event: Event, sealed: SealedCapture, searchTokens: Uint8Array[]): void {
  event.sealedRequest = { $typeName: "webhookcapture.catalog.v1.SealedBody", ...sealed.request };
  if (event.forward && sealed.forwardTarget) event.forward.target = sealed.forwardTarget;
  if (sealed.body) {
    event.body = { $typeName: "webhookcapture.catalog.v1.SealedBody", ...sealed.body };
    event.searchTokens = searchTokens;
  }
}
