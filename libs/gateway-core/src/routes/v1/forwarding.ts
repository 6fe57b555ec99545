import { z } from "zod";
import type { AttemptResult } from "@whc/contracts";
import { extension, forwardAttempt, recordAttemptRequest, uuid, type ForwardAttemptJson } from "@whc/api-model";
import { AppError, validationFailed } from "@whc/errors";
import { forwardAttemptJson } from "@whc/api-model/present";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { redactedBodyWarning } from "./warnings.js";
import { auditContext } from "../../audit.js";

/** What a recorded attempt keeps of the answer body (design §11): redelivery asks for as much. */
const ATTEMPT_BODY_BYTES = 64 * 1024;

/** `POST .../redeliver`: an empty body or `{}`, or the destination to send to (design §17). */
export const redeliverBody = z
  .strictObject({
    destinationId: uuid
      .optional()
      .describe("The destination to send to; absent: the event's one delivery, or the endpoint's first destination when it has none (required when the event has several)."),
  })
  .meta({ ...extension });

function attemptJson(result: AttemptResult | undefined): ForwardAttemptJson {
  const a = result!;
  return { ...forwardAttemptJson(a, a.body.length > 0 ? a.body : undefined), ...(a.destinationId ? { destinationId: a.destinationId } : {}) };
}

/** Forwarding's operations on one event (design §11): redeliver now, and record a client's attempt. */
export function forwardingRoutes(deps: GatewayDeps): Route[] {
  const { replay, catalog } = deps;
  /** After a redelivery: whether the body sent was stored redacted (design §16). Never fails the redelivery. */
  async function redactedWarning(accountId: string, endpointId: string, eventId: string) {
    try {
      const { event } = await catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
      return event && redactedBodyWarning(event);
    } catch {
      return undefined;
    }
  }
  return [
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/redeliver",
      scope: "events:replay",
      operationId: "redeliverEvent",
      summary: "Redeliver an event to a destination",
      description:
        "Sends the event to one of the endpoint's destinations now (trigger `manual`) and answers the attempt, also " +
        "recorded in that delivery of the event's `forwardedResponse`. `destinationId` names the destination; without it, " +
        "the event's one delivery's, or the endpoint's first destination when the event has none (an event delivered to " +
        "several destinations needs it). A 2xx makes the delivery `delivered` and takes it out of the retry outbox; any " +
        "other answer leaves a delivery waiting for a retry as it is, and otherwise marks it `failed`. Works on any " +
        "endpoint with destinations, `capture` ones included, and on a destination whose filter the event did not match. " +
        "An event stored redacted is sent as stored, and the answer carries `warnings: [{\"code\":\"body_redacted\"}]`.\n\n" +
        "Errors: 409 `forward_not_configured` when the endpoint has no destinations (or none with that id); 400 " +
        "`validation_failed` on `destinationId` (`required`) when the event has several deliveries and none is named.",
      tags: ["forwarding"],
      extension: true,
      body: redeliverBody,
      success: {
        status: 200,
        schema: forwardAttempt,
        description: "Sent to the endpoint's forward destination (trigger manual); the attempt, also recorded in forwardedResponse.",
      },
      errors: [400, 409, 413, 415],
      async handler(ctx, { auth, params, body }) {
        const res = await replay
          .forwardEvent({
            audit: auditContext(ctx, auth),
            accountId: auth.accountId,
            endpointId: params.endpointId!,
            eventId: params.eventId!,
            trigger: "manual",
            maxResponseBytes: ATTEMPT_BODY_BYTES,
            destinationId: body.destinationId?.toLowerCase() ?? "",
          })
          .catch((err: unknown) => {
            // Replay names its own field; /v1 names the request's.
            if (AppError.is(err) && err.field === "destination_id") throw validationFailed("destinationId", err.fieldReason ?? "format", err.message);
            throw err;
          });
        const redacted = await redactedWarning(auth.accountId, params.endpointId!, params.eventId!);
        return { ...attemptJson(res.attempt), ...(redacted ? { warnings: [redacted] } : {}) };
      },
    }),
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/attempts",
      scope: "events:write",
      operationId: "recordAttempt",
      summary: "Record a delivery attempt a client made",
      description:
        "Records an attempt a client made itself as trigger `cli` in the event's `forwardedResponse`, moving the " +
        "delivery's state as a redeliver does: `whc listen --forward-to` sends each capture to a local app and reports " +
        "here what it answered. Give exactly one of `status` (the app answered) and `error` (it did not); the answer's " +
        "body is kept up to 64 KiB.",
      tags: ["forwarding"],
      extension: true,
      body: recordAttemptRequest,
      bodyRequired: true,
      success: { status: 201, schema: forwardAttempt, description: "Recorded (trigger cli) in the event's forwardedResponse." },
      errors: [400, 413, 415],
      async handler(_ctx, { auth, params, body }) {
        const res = await replay.recordClientAttempt({
          accountId: auth.accountId,
          endpointId: params.endpointId!,
          eventId: params.eventId!,
          url: body.url,
          status: body.status ?? 0,
          error: body.error ?? "",
          durationMs: BigInt(body.durationMs),
          headers: Object.entries(body.headers ?? {}).flatMap(([name, values]) => values.map((value) => ({ name, value }))),
          body: Buffer.from(body.bodyBase64 ?? "", "base64"),
        });
        return attemptJson(res.attempt);
      },
    }),
  ];
}
