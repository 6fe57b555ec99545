import { testDestinationRequest, testDestinationResult, type TestDestinationResultJson, type TransformRequestJson } from "@whc/api-model";
import { scopeAllows } from "@whc/api-model";
import { checkTransformSource } from "@whc/transform-sandbox";
import { validationFailed } from "@whc/errors";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { recordAfter } from "../../audit.js";
import { forbidden } from "../../scopes.js";
import { MAX_ENDPOINT_BODY_BYTES } from "../../middleware/json-body.js";
import { checkFilter } from "./destination-settings.js";

/**
 * `POST /v1/endpoints/{endpointId}/destinations/test` (design §17): a filter and a transform
 * tried on one stored event, by the replay service (the filter as ingest runs it, the transform
 * in the delivery's sandbox); nothing is sent or saved. The answer can carry the event's body
 * (the request that would go), so, beyond the route's scope endpoints:write, a found event's
 * request is shown only to a key that may read events (events:read), and the read is audited
 * (event.read) as a detail's is (ADR 0080).
 */
export function destinationTestRoutes(deps: GatewayDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/destinations/test",
      scope: "endpoints:write",
      operationId: "testDestination",
      summary: "Try a destination's filter and transform on an event",
      description:
        "Runs a filter and a transform (a destination's, or ones being written) on one stored event of the endpoint, " +
        "as a delivery would: whether the filter matches (no filter: it does), and the request that would be sent (the " +
        "transform's answer; without a transform, the capture as stored). `request` is null when the filter does not " +
        "match, when the transform answers null (the delivery would be skipped) or fails (`error` says why: a throw, a " +
        "timeout, a bad return). Nothing is sent and nothing is saved. The answer holds the event's body, so the key " +
        "also needs `events:read`, and the read is in the audit log as `event.read`.\n\n" +
        "Errors: 400 `validation_failed` for a filter or transform that could not be saved either (`destination.filter...`, " +
        "`reason: unsupported_operator` for an operator outside design §17's list; `destination.transform` with `length`, " +
        "`format` or `required`); 404 for an unknown event; 403 `forbidden` (`details.scope: events:read`).",
      tags: ["endpoints"],
      extension: true,
      body: testDestinationRequest,
      bodyRequired: true,
      maxBodyBytes: MAX_ENDPOINT_BODY_BYTES,
      success: { status: 200, schema: testDestinationResult, description: "The filter's verdict and the request that would be sent." },
      errors: [400, 403, 413, 415],
      async handler(ctx, { auth, params, body }): Promise<TestDestinationResultJson> {
        const { filter, transform } = body.destination;
        checkFilter("destination", filter);
        if (transform) {
          const checked = checkTransformSource(transform);
          if (!checked.ok) throw validationFailed("destination.transform", checked.reason, checked.message);
        }
        const endpointId = params.endpointId!;
        const eventId = body.eventId.toLowerCase();
        const res = await deps.replay.testDestination({
          accountId: auth.accountId,
          endpointId,
          eventId,
          filterJson: filter ? JSON.stringify(filter) : "",
          transform: transform ?? "",
        });
        // The event exists and is the endpoint's: what comes back is its content.
        if (!scopeAllows(auth.scopes, "events:read")) throw forbidden("events:read");
        await recordAfter(deps, ctx, auth, { action: "event.read", endpointId, eventId, details: { destinationTest: true } });
        return {
          matched: res.matched,
          request: res.requestJson ? (JSON.parse(res.requestJson) as TransformRequestJson) : null,
          error: res.error || null,
          durationMs: res.durationMs,
        };
      },
    }),
  ];
}
