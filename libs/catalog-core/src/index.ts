export type { CatalogStore } from "./ports.js";
export type * from "./types.js";
export { createCatalogService } from "./service.js";
export { ensuredApiKey } from "./api-keys.js";
export type { CatalogServiceOptions } from "./service.js";
export { nextStamp } from "./ids.js";
export { endpointQuotaExceeded, keyQuotaExceeded, redeliveryJobsExceeded, redeliveryTooLarge } from "./quotas.js";
export {
  OPEN_STATES,
  REDONE_STATES,
  canceledJob,
  claimedJob,
  cursorAfter,
  endedOutcome,
  failedJob,
  isClaimableJob,
  jobAfterEnded,
  jobLeaseHolds,
  newRedeliveryJob,
  pagedJob,
  redeliveryDestinations,
  redeliveryNotConfigured,
  redoes,
  releasedJob,
  renewedJob,
  requeuedDelivery,
  settledJob,
} from "./redelivery.js";
export { MAX_REDELIVERY_PAGE, redeliveryFilterOf, redeliveryFilterToProto, redeliveryJobToProto } from "./service-redeliveries.js";
export { isStalled, listenerQuotaExceeded, nextLagRun } from "./listeners.js";
export type { ListenerOptions } from "./service-listeners.js";
export { alertChannelToProto, createAlertRaiser } from "./service-alerts.js";
export type { AlertOptions, RaiseAlerts } from "./service-alerts.js";
export {
  alertChannelNameTaken,
  alertChannelQuotaExceeded,
  alertClaimHolds,
  channelWants,
  claimedAlert,
  coalesces,
  deliveryNoteOf,
  isClaimableAlert,
  isOpenForRepeats,
  raisedInto,
  recordedAlert,
} from "./alerts.js";
export { MAX_ENDPOINT_PAGE } from "./service.js";
export type { Clock } from "./ids.js";
export { translatingErrors } from "./translating-errors.js";
export { tracedStore } from "./traced-store.js";
export {
  PATCHED_FIELDS,
  applyEndpointPatch,
  newEndpointRecord,
  patchedSecret,
  patchedTargetSecret,
  patchedDestinationSecrets,
  replacedFields,
  sequenceStatus,
  forwardPrecondition,
  forwardRequired,
  meetsForwardPrecondition,
} from "./endpoint-patch.js";
export {
  NEVER_FORWARDED,
  aggregateOf,
  countedAttempt,
  heldDelivery,
  probedDelivery,
  releasedDelivery,
  appendedDeliveries,
  begunDelivery,
  claimableAt,
  claimHolds,
  claimedDelivery,
  letThroughClaim,
  deliveryRecordOf,
  isClaimable,
  isSuccessStatus,
  legacyDestinationId,
  recordedDelivery,
} from "./delivery.js";
export type { DeliveryProgress } from "./delivery.js";
export { appendedForwardState, dedupeDecision, dedupeKeyId, MAX_DEDUPE_KEY_BYTES, MAX_DEDUPE_WINDOW_MS } from "./dedupe.js";
export type { DedupeOutcome } from "./dedupe.js";
export {
  DRAIN_SPACING_MS,
  breakerOutcomeOf,
  createControlCache,
  destinationControlsOf,
  gateOf,
  heldTransition,
  holdsDeliveries,
  newBreaker,
  probeDue,
  probing,
  recordedBreaker,
  drainTurn,
  drained,
  drainsNext,
  isLetThrough,
  takeTurn,
  waitingTurn,
  MAX_WAITS_PER_CLAIM,
  PACED_SEND_DELAY_MS,
  sendAfterMsOf,
} from "./breaker.js";
export type { BreakerChange, BreakerOutcome, BreakerRecord, BreakerView, DestinationControl, Gate } from "./breaker.js";
export type { ForwardPrecondition, ReplacedField } from "./endpoint-patch.js";
export { isUuid, newId, uuidV7Time, UUID_PATTERN } from "@whc/ids";
/** The packed form of search tokens (@whc/sealing), for adapters that move tokens between threads. */
export { packSearchTokens, unpackSearchTokens } from "@whc/sealing";
export { driftOf, learnGroup, learnShape, newSchema, observationsBySchema, openSchema, parentPath, schemaEventType, schemaKey } from "./schemas.js";
export type { LearnedGroup, LearningSchema } from "./schemas.js";
export { createSchemaLearner, SCHEMA_LEARNER_DEFAULTS } from "./schema-learner.js";
export type { OnSchemaDrift, SchemaLearner, SchemaLearnerOptions } from "./schema-learner.js";
