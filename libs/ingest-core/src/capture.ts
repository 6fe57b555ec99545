import type { IncomingMessage, ServerResponse } from "node:http";
import type { Event } from "@whc/contracts";
import type { SealedBodyParts } from "@whc/sealing";
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
 * arrived. Id and commit time are the catalog's to give; the body is added once sealed.
 */
export function captureEvent(
  c: Capture,
  { endpoint, secret, previousSecret }: IngestEndpoint,
  body: ReadBody,
  options: { trustedProxies: ReadonlySet<string>; secretGraceMs: number; publicUrl: string },
): { event: Event; diagnosis: CaptureDiagnosis } {
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
    path: c.rest,
    headers: headers.map(([name, value]) => ({ $typeName: "webhookcapture.common.v1.Header", name, value })),
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
  return { event, diagnosis };
}

/** What ingest learned of a capture before answering it (design §12); the answer adds its source. */
export interface CaptureDiagnosis {
  bodySha256: string;
  contentType: ContentTypeDiagnosis;
  signature: VerifyResult["signature"];
}

export function withSealedBody(event: Event, parts: SealedBodyParts, searchTokens: Uint8Array[]): void {
  event.body = { $typeName: "webhookcapture.catalog.v1.SealedBody", ...parts };
  event.searchTokens = searchTokens;
}
