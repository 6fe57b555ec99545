import { isForwardingMode } from "@whc/api-model";
import { validationFailed, type AppError } from "@whc/errors";
import type { EndpointPatch, EndpointRecord, NewEndpoint } from "./types.js";

/**
 * The record a store writes for a new endpoint: counters at zero, no response, forward or
 * redaction settings unless given.
 */
export function newEndpointRecord(endpoint: NewEndpoint): EndpointRecord {
  return {
    ...endpoint,
    responseJson: endpoint.responseJson ?? "",
    forwardJson: endpoint.forwardJson ?? "",
    inboundJson: endpoint.inboundJson ?? "",
    sealedInbound: endpoint.inboundJson ? endpoint.sealedInbound : undefined,
    rejectedCount: 0,
    redactJson: endpoint.redactJson ?? "",
    dedupeJson: endpoint.dedupeJson ?? "",
    sequenceCounter: 0,
  };
}

/** The fields a patch replaces as given (the secrets and the sequence have rules). */
const REPLACED = [
  "displayName",
  "status",
  "operatingMode",
  "replayFromDashboard",
  "replayFromApi",
  "provider",
  "genericSignatureHeader",
  "genericSignaturePrefix",
  "responseJson",
  "forwardJson",
  "inboundJson",
  "redactJson",
  "dedupeJson",
] as const satisfies readonly (keyof EndpointPatch & keyof EndpointRecord)[];

export type ReplacedField = (typeof REPLACED)[number];

/** Every field an update may change: what a store that writes the patched record writes. */
export const PATCHED_FIELDS = [
  ...REPLACED,
  "sealedSecret",
  "sealedPreviousSecret",
  "secretRotatedAt",
  "sealedTargetSecret",
  "sealedDestinationSecrets",
  "sealedInbound",
  "sequenceCounter",
  "updatedAt",
] as const satisfies readonly (keyof EndpointRecord)[];

/** The plain replacements a patch asks for, in a fixed order; absent fields left out. */
export function replacedFields(patch: EndpointPatch): Partial<Pick<EndpointRecord, ReplacedField>> {
  const changes: Record<string, unknown> = {};
  for (const field of REPLACED) if (patch[field] !== undefined) changes[field] = patch[field];
  return changes as Partial<Pick<EndpointRecord, ReplacedField>>;
}

/** The secret fields after a patch: a rotation keeps the current secret as the previous one. */
export function patchedSecret(
  current: Pick<EndpointRecord, "sealedSecret" | "sealedPreviousSecret" | "secretRotatedAt">,
  patch: Pick<EndpointPatch, "sealedSecret" | "clearSecret">,
  now: number,
): Pick<EndpointRecord, "sealedSecret" | "sealedPreviousSecret" | "secretRotatedAt"> {
  if (patch.sealedSecret !== undefined) {
    const previous = patch.clearSecret ? undefined : current.sealedSecret;
    return { sealedSecret: patch.sealedSecret, sealedPreviousSecret: previous, secretRotatedAt: now };
  }
  if (patch.clearSecret) return { sealedSecret: undefined, sealedPreviousSecret: undefined, secretRotatedAt: undefined };
  return { sealedSecret: current.sealedSecret, sealedPreviousSecret: current.sealedPreviousSecret, secretRotatedAt: current.secretRotatedAt };
}

/**
 * The forward target secret after a patch: removing the forward settings (`forwardJson: ""`)
 * removes it too, whatever else the patch says; a new one replaces it; `clearTargetSecret`
 * removes it.
 */
export function patchedTargetSecret(
  current: Pick<EndpointRecord, "sealedTargetSecret">,
  patch: Pick<EndpointPatch, "forwardJson" | "sealedTargetSecret" | "clearTargetSecret">,
): Uint8Array | undefined {
  if (patch.forwardJson === "") return undefined;
  if (patch.sealedTargetSecret !== undefined) return patch.sealedTargetSecret;
  if (patch.clearTargetSecret) return undefined;
  return current.sealedTargetSecret;
}

/**
 * The destinations' sealed secrets after a patch: removed with the destinations
 * (`forwardJson: ""`), replaced by the patch's (empty: removed), else kept.
 */
export function patchedDestinationSecrets(
  current: Pick<EndpointRecord, "sealedDestinationSecrets">,
  patch: Pick<EndpointPatch, "forwardJson" | "sealedDestinationSecrets">,
): Uint8Array | undefined {
  if (patch.forwardJson === "") return undefined;
  if (patch.sealedDestinationSecrets !== undefined) return patch.sealedDestinationSecrets.length > 0 ? patch.sealedDestinationSecrets : undefined;
  return current.sealedDestinationSecrets;
}

/** The sealed inbound protection after a patch: replaced with its JSON, removed with it. */
export function patchedInbound(current: Pick<EndpointRecord, "sealedInbound">, patch: Pick<EndpointPatch, "inboundJson" | "sealedInbound">): Uint8Array | undefined {
  if (patch.inboundJson === undefined) return current.sealedInbound;
  return patch.inboundJson === "" ? undefined : patch.sealedInbound;
}

/**
 * The endpoint as a patch leaves it, at `now`: the reference for every store's update (the
 * SQLite store applies it as is; the MongoDB update document is checked against it).
 */
export function applyEndpointPatch(current: EndpointRecord, patch: EndpointPatch, now: number): EndpointRecord {
  return {
    ...current,
    ...replacedFields(patch),
    ...patchedSecret(current, patch, now),
    sealedTargetSecret: patchedTargetSecret(current, patch),
    sealedDestinationSecrets: patchedDestinationSecrets(current, patch),
    sealedInbound: patchedInbound(current, patch),
    sequenceCounter: patch.resetSequence ? 0 : current.sequenceCounter,
    updatedAt: now,
  };
}

/** The status the n-th answer of a response sequence gives (n counted from 0, wrapping). */
export function sequenceStatus(statuses: readonly number[], n: number): number {
  return statuses[n % statuses.length] as number;
}

/** The refusal of an update that would leave a relay or proxy endpoint with nowhere to forward. */
export function forwardRequired(operatingMode: string): AppError {
  return validationFailed("forward", "required", `operatingMode ${operatingMode} needs forward`);
}

/**
 * What a patch that touches the mode or the forward settings needs of the stored endpoint so
 * that a relay or proxy endpoint keeps its forward settings, decided inside the update (a check
 * that reads then writes would let two concurrent PATCHes each pass it):
 * - `refuse`: the patch alone leaves a forwarding mode without settings;
 * - `stored_forward`: it sets a forwarding mode and keeps the stored settings, which must exist;
 * - `stored_mode_not_forwarding`: it removes the settings and keeps the stored mode, which must
 *   not forward;
 * - `none`: any stored endpoint will do. A patch touching neither is `none`, so an endpoint
 *   stored before the rule still takes other changes.
 */
export type ForwardPrecondition = "none" | "refuse" | "stored_forward" | "stored_mode_not_forwarding";

export function forwardPrecondition(patch: Pick<EndpointPatch, "operatingMode" | "forwardJson">): ForwardPrecondition {
  const { operatingMode, forwardJson } = patch;
  const forwards = operatingMode !== undefined && isForwardingMode(operatingMode);
  if (forwardJson === undefined) return forwards ? "stored_forward" : "none";
  if (forwardJson !== "") return "none";
  if (operatingMode === undefined) return "stored_mode_not_forwarding";
  return forwards ? "refuse" : "none";
}

/** Whether the stored endpoint meets the patch's precondition (the reference for every store). */
export function meetsForwardPrecondition(stored: Pick<EndpointRecord, "operatingMode" | "forwardJson">, pre: ForwardPrecondition): boolean {
  switch (pre) {
    case "none":
      return true;
    case "refuse":
      return false;
    case "stored_forward":
      return stored.forwardJson !== "";
    case "stored_mode_not_forwarding":
      return !isForwardingMode(stored.operatingMode);
  }
}
