import type { CapturedEvent } from "@whc/contracts";
import type { SealedCapture } from "./envelope.js";

/**
 * Puts a capture's sealed parts into the message the catalog appends (ADR 0011): the data key
 * once for the sealed request and body (they share it, ADR 0009), the sealed delivery targets,
 * and the body's search tokens, packed (packSearchTokens), only beside a body. Ingest writes
 * every capture through this, and so do the tests' captures (@whc/testing appendCaptures),
 * so what the catalog reads in tests is what ingest sends.
 */
export function withSealedParts(capture: CapturedEvent, sealed: SealedCapture, searchTokens: Uint8Array): CapturedEvent {
  const key = sealed.body ?? sealed.request;
  capture.wrappedKey = key.wrappedKey;
  capture.keyId = key.keyId;
  capture.sealedRequest = sealed.request.ciphertext;
  if (sealed.body) {
    capture.body = sealed.body.ciphertext;
    capture.searchTokens = searchTokens;
  }
  // The capture's deliveries were listed before sealing, in the order of their targets.
  sealed.forwardTargets.forEach((target, i) => {
    const delivery = capture.deliveries[i];
    if (delivery) delivery.target = target;
  });
  return capture;
}
