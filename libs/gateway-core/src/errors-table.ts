import type { ErrorReason } from "@whc/errors";

/** The gateway's code -> HTTP table (docs/design.md §3). `message` is fixed per code. */
export const errorTable: Record<ErrorReason, { status: number; code: string; message: string }> = {
  unauthorized: { status: 401, code: "unauthorized", message: "A valid API key is required." },
  not_found: { status: 404, code: "not_found", message: "The requested resource was not found." },
  validation_failed: { status: 400, code: "validation_failed", message: "The request is not valid." },
  malformed_json: { status: 400, code: "malformed_json", message: "The request body must be a JSON object." },
  unsupported_media_type: {
    status: 415,
    code: "unsupported_media_type",
    message: "The request body must be sent as application/json.",
  },
  payload_too_large: { status: 413, code: "payload_too_large", message: "The request body is too large." },
  method_not_allowed: { status: 405, code: "method_not_allowed", message: "The method is not allowed on this path." },
  slug_taken: { status: 409, code: "slug_taken", message: "An endpoint with this slug already exists." },
  conflict: { status: 409, code: "conflict", message: "The request conflicts with the current state." },
  replay_disabled: { status: 403, code: "replay_disabled", message: "Replay is disabled for this endpoint." },
  forbidden: { status: 403, code: "forbidden", message: "The API key does not allow this; details.scope names the scope needed." },
  target_not_allowed: {
    status: 400,
    code: "target_not_allowed",
    message:
      "The replay or forward target is not allowed (details.reason says why); private, loopback and link-local addresses need WHC_REPLAY_ALLOW_PRIVATE_TARGETS on the server.",
  },
  forward_not_configured: { status: 409, code: "forward_not_configured", message: "The endpoint has no forward destination." },
  trigger_unavailable: { status: 409, code: "trigger_unavailable", message: "This endpoint cannot be triggered; details.cause says why." },
  signing_unsupported: {
    status: 409,
    code: "signing_unsupported",
    message: "This provider's signature cannot be made with the secret at hand (it verifies with a public key); give the signing key as target_secret.",
  },
  replay_limit_exceeded: {
    status: 429,
    code: "replay_limit_exceeded",
    message: "The daily replay limit of the account has been reached.",
  },
  quota_exceeded: {
    status: 429,
    code: "quota_exceeded",
    message: "A quota of the account or of the API key is spent; details.quota names it.",
  },
  egress_capacity_exhausted: {
    status: 503,
    code: "egress_capacity_exhausted",
    message: "No outbound capacity is available for this destination; retry shortly.",
  },
  service_unavailable: {
    status: 503,
    code: "service_unavailable",
    message: "The service is temporarily unavailable; retry shortly.",
  },
  timeout: { status: 503, code: "service_unavailable", message: "The service is temporarily unavailable; retry shortly." },
  internal_error: { status: 500, code: "internal_error", message: "An internal error occurred." },
};
