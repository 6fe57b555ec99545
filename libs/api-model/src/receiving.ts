import { z } from "zod";
import { ATTEMPT_ERRORS } from "./values.js";
import { uuid } from "./common.js";

/*
 * What ingest answers webhook senders at a webhookUrl (docs/api.md, "The receiving surface"):
 * the shapes the OpenAPI document describes. Ingest writes these bodies itself; the receiving
 * surface's tests check its answers against the document.
 */

/** A stored capture's answer when the endpoint configures no other. */
export const captureAck = z.object({
  ok: z.literal(true),
  id: uuid.meta({ description: "The stored event's id, as the events of `/v1` name it." }),
});
export type CaptureAckJson = z.infer<typeof captureAck>;

/** Why ingest refused a request (or stored only its metadata: `payload_too_large`). */
export const CAPTURE_REFUSALS = [
  "not_found",
  "endpoint_paused",
  "overloaded",
  "service_unavailable",
  "payload_too_large",
  "forward_loop",
  "request_timeout",
  "unauthorized",
  "forbidden",
  "method_not_allowed",
] as const;

export const captureRefusal = z.object({
  ok: z.literal(false),
  error: z.enum(CAPTURE_REFUSALS),
  message: z.string().optional().meta({ description: "One fixed sentence per code, for a person reading a sender's log." }),
  id: uuid.optional().meta({ description: "`payload_too_large`: the event that holds the request's metadata; `forward_loop`: the event stored." }),
});
export type CaptureRefusalJson = z.infer<typeof captureRefusal>;

/** What a proxy endpoint's sender gets when the destination could not be reached (design §11). */
export const forwardFailure = z.object({
  error: z.literal("forward_failed"),
  reason: z.enum([...ATTEMPT_ERRORS, "response_too_large", "service_unavailable"]).meta({
    description:
      "Why: an attempt `error` (`timeout` is answered 504), `response_too_large` (the answer passed the inbound body limit) " +
      "or `service_unavailable` (the replay service could not be reached).",
  }),
});
export type ForwardFailureJson = z.infer<typeof forwardFailure>;
