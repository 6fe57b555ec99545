import type { Client } from "@connectrpc/connect";
import { encodeCapturedEvents, type AppendedEvent, type CapturedEvent, type CatalogService } from "@whc/contracts";
import { packRequest, packSearchTokens, withSealedParts, type BlindIndexer, type EnvelopeSealer } from "@whc/sealing";

/** A capture as a test describes it: what a sender sent and what ingest judged of it. */
export interface CaptureInput {
  accountId: string;
  endpointId: string;
  method?: string;
  /** The sub-path and query after the webhook URL ("", "/ci", "?x=1"). */
  path?: string;
  headers?: readonly (readonly [string, string])[];
  /** The stored body; absent: only metadata is stored (metadata_only, or over the limit). */
  body?: Uint8Array | string | undefined;
  remoteIp?: string;
  provider?: string;
  canonicalEventType?: string;
  verification?: string;
  verificationFailureReason?: string;
  responseCode?: number;
  truncated?: boolean;
  /** Default: the body's length. */
  originalSizeBytes?: number;
  diagnosticJson?: string;
  sequenceStatuses?: number[];
  /**
   * A relay or proxy capture's target URL (sealed with the capture, as ingest seals it), for
   * the endpoint's one destination saved as `forward` settings (its id is the endpoint's).
   */
  forwardTarget?: string;
  /** Or its deliveries, one per destination it matched (design §17). */
  deliveries?: readonly { destinationId: string; target: string }[];
  /** relay: the delivery enters the outbox with the append. */
  forwardScheduled?: boolean;
  /** What ingest redacted, as the /v1 `redactions` JSON; absent: nothing. */
  redactionsJson?: string;
  /** The body's shape as ingest reads it (@whc/ingest-core's bodyShapeText); absent: not learned. */
  bodyShape?: string;
}

const NONE = new Uint8Array(0);

/**
 * Appends captures the way ingest does (ADR 0011, 0013): the request packed and sealed with
 * the body and forward target under one data key (withSealedParts, the function ingest uses),
 * the body's words indexed when `index` is given, the batch sent as `encoded_captures`. What
 * the catalog stores and what tests then read is what ingest would have written.
 */
export async function appendCaptures(
  catalog: Pick<Client<typeof CatalogService>, "appendEvents">,
  sealer: EnvelopeSealer,
  inputs: readonly CaptureInput[],
  options: { index?: BlindIndexer } = {},
): Promise<AppendedEvent[]> {
  const captures = await Promise.all(inputs.map((input) => sealedCapture(sealer, input, options.index)));
  const { events } = await catalog.appendEvents({ encodedCaptures: encodeCapturedEvents(captures) });
  return events;
}

/** One capture built and sealed as ingest builds it, ready to append. */
export async function sealedCapture(sealer: EnvelopeSealer, input: CaptureInput, index?: BlindIndexer): Promise<CapturedEvent> {
  const body = typeof input.body === "string" ? Buffer.from(input.body, "utf8") : input.body;
  const capture: CapturedEvent = {
    $typeName: "webhookcapture.catalog.v1.CapturedEvent",
    accountId: input.accountId,
    endpointId: input.endpointId,
    method: input.method ?? "POST",
    remoteIp: input.remoteIp ?? "203.0.113.5",
    canonicalEventType: input.canonicalEventType ?? "",
    provider: input.provider ?? "generic",
    verification: input.verification ?? "unverified",
    verificationFailureReason: input.verificationFailureReason ?? "",
    responseCode: input.responseCode ?? 200,
    truncated: input.truncated ?? false,
    originalSizeBytes: BigInt(input.originalSizeBytes ?? body?.length ?? 0),
    wrappedKey: NONE,
    keyId: "",
    sealedRequest: NONE,
    body: undefined,
    searchTokens: NONE,
    diagnosticJson: input.diagnosticJson ?? "",
    forwardedResponseJson: "",
    sequenceStatuses: input.sequenceStatuses ?? [],
    forwardTarget: "",
    forwardScheduled: input.forwardScheduled ?? false,
    redactionsJson: input.redactionsJson ?? "",
    bodyShape: input.bodyShape ?? "",
    deliveries: [],
    dedupeKey: NONE,
    dedupeWindowMs: 0n,
  };
  const deliveries = input.deliveries ?? (input.forwardTarget ? [{ destinationId: input.endpointId, target: input.forwardTarget }] : []);
  capture.deliveries = deliveries.map((d) => ({ $typeName: "webhookcapture.catalog.v1.CapturedDelivery", destinationId: d.destinationId, target: "" }));
  const request = packRequest({ path: input.path ?? "", headers: input.headers ?? [["Content-Type", "application/json"]] });
  const sealed = await sealer.sealCapture(input.endpointId, { request, body, forwardTargets: deliveries.map((d) => d.target) });
  return withSealedParts(capture, sealed, body && index ? packSearchTokens(index(body)) : NONE);
}
