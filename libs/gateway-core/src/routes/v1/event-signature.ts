import { eventSignature, eventSignatureRequest, isDashboardSession, type EventSignatureJson } from "@whc/api-model";
import { eventSignatureJson, webhookUrlOf } from "@whc/api-model/present";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";

/**
 * Fresh signature headers for an event (design §19; ADR 0060). Computed by the replay service,
 * which opens the endpoint's secret for the call: the gateway never holds one.
 */
export function eventSignatureRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/signature",
      scope: "events:replay",
      operationId: "signEvent",
      summary: "Sign an event's stored bytes again, now",
      description:
        "The provider's signature headers for the event's stored body, made now as the provider would send them, with the " +
        "endpoint's secret (or `target_secret`): `whc listen --resign` puts them in place of the captured ones, so that a " +
        "capture delivered minutes or days late still verifies in an app that checks the signature's age (Stripe: 5 " +
        "minutes). Drop every captured header that `replaces` names, then add `headers`. Providers that sign the URL " +
        "(Twilio, Square, HubSpot) sign `target_url`, by default the capture's own. Nothing is sent and the replay " +
        "allowance is not spent.\n\n" +
        "Errors: 400 `validation_failed` on `target_secret` (`reason: required`) when the endpoint has no secret and none " +
        "is given; 403 `replay_disabled` when the endpoint's `replayFromApi` is false (`replayFromDashboard` for a key with " +
        "scope `dashboard`); 409 `signing_unsupported` when the " +
        "provider signs with a private key the endpoint does not have (Discord, SendGrid: give it as `target_secret`); 409 " +
        "`conflict` when the event's body is not stored.",
      tags: ["replay"],
      extension: true,
      body: eventSignatureRequest,
      success: { status: 200, schema: eventSignature, description: "Fresh signature headers, signed at `signedAt`." },
      errors: [400, 403, 409, 413, 415],
      async handler(_ctx, { auth, params, body }): Promise<EventSignatureJson> {
        const signed = await deps.replay.signEvent({
          accountId: auth.accountId,
          endpointId: params.endpointId!,
          eventId: params.eventId!,
          targetSecret: body.target_secret ?? "",
          targetUrl: body.target_url ?? "",
          captureBaseUrl: webhookUrlOf(options.ingestPublicUrl, params.endpointId!),
          client: isDashboardSession(auth.scopes) ? "dashboard" : "api",
        });
        return eventSignatureJson(signed);
      },
    }),
  ];
}
