import { z } from "zod";
import type { AttemptResult } from "@whc/contracts";
import { extension, forwardAttempt, recordAttemptRequest, type ForwardAttemptJson } from "@whc/api-model";
import { forwardAttemptJson } from "@whc/api-model/present";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { redactedBodyWarning } from "./warnings.js";
import { auditContext } from "../../audit.js";

/** What a recorded attempt keeps of the answer body (design §11): redelivery asks for as much. */
const ATTEMPT_BODY_BYTES = 64 * 1024;

/** `POST .../redeliver` takes no field: an empty body or `{}`. */
export const redeliverBody = z.strictObject({}).meta({ ...extension });

function attemptJson(result: AttemptResult | undefined): ForwardAttemptJson {
  const a = result!;
  return forwardAttemptJson(a, a.body.length > 0 ? a.body : undefined);
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
      summary: "Redeliver an event to its forward destination",
      description:
        "Sends the event to the endpoint's `forward` destination now (trigger `manual`) and answers the attempt, also " +
        "recorded in the event's `forwardedResponse`. A 2xx makes the delivery `delivered` and takes it out of the retry " +
        "outbox; any other answer leaves a delivery waiting for a retry as it is, and otherwise marks it `failed`. Works " +
        "on any endpoint with `forward` settings, `capture` ones included. An event stored redacted is sent as stored, " +
        "and the answer carries `warnings: [{\"code\":\"body_redacted\"}]`.\n\n" +
        "Errors: 409 `forward_not_configured` when the endpoint has no `forward` settings.",
      tags: ["forwarding"],
      extension: true,
      body: redeliverBody,
      success: {
        status: 200,
        schema: forwardAttempt,
        description: "Sent to the endpoint's forward destination (trigger manual); the attempt, also recorded in forwardedResponse.",
      },
      errors: [400, 409, 413, 415],
      async handler(ctx, { auth, params }) {
        const res = await replay.forwardEvent({
          audit: auditContext(ctx, auth),
          accountId: auth.accountId,
          endpointId: params.endpointId!,
          eventId: params.eventId!,
          trigger: "manual",
          maxResponseBytes: ATTEMPT_BODY_BYTES,
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
