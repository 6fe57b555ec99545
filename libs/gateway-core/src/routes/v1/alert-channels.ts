import { randomBytes } from "node:crypto";
import type { Context } from "koa";
import type { z } from "zod";
import type { AlertChannel } from "@whc/contracts";
import {
  ALERT_CHANNEL_LIMITS,
  ALERT_COALESCE_S,
  ALERT_MAX_ATTEMPTS,
  alertChannelList,
  alertTestAnswer,
  createAlertChannelRequest,
  createdAlertChannel,
  endpointsWithin,
  type AlertChannelListJson,
  type AlertTestJson,
  type CreatedAlertChannelJson,
  type Warning,
} from "@whc/api-model";
import { alertChannelJson } from "@whc/api-model/present";
import { refusalReason } from "@whc/egress-guard";
import { AppError, notFound, validationFailed } from "@whc/errors";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import type { AuthState } from "../../middleware/auth.js";
import { route, type Route } from "../../route.js";
import { forbidden } from "../../scopes.js";
import { auditContext } from "../../audit.js";
import { knownEndpoints } from "./keys.js";
import { isOwnWebhookUrl } from "./forward-settings.js";

/**
 * Whether a channel is within the caller's reach (ADR 0086): every channel for a key on every
 * endpoint; for a key restricted to endpoints, only a channel restricted to some of them (a
 * channel of every endpoint would tell it about endpoints it cannot see).
 */
function withinReach(auth: AuthState, channel: Pick<AlertChannel, "endpointIds">): boolean {
  return endpointsWithin(auth.endpointIds, channel.endpointIds);
}

/** The caller's channel by id; another account's, or one beyond its reach, is 404 as an unknown id. */
async function reachableChannel(deps: GatewayDeps, auth: AuthState, id: string): Promise<AlertChannel> {
  const { channels } = await deps.catalog.listAlertChannels({ accountId: auth.accountId });
  const found = channels.find((c) => c.id === id);
  if (!found || !withinReach(auth, found)) throw notFound("alert channel");
  return found;
}

/**
 * A channel's URL, vetted when it is saved as a forward destination's is (design §14): one of
 * the deployment's own webhook URLs is a loop; what the egress guard would not send to is
 * target_not_allowed with its reason; a host that does not resolve now is saved with a
 * `dns_failure` warning (every alert looks it up again).
 */
async function vetChannelUrl(deps: GatewayDeps, url: string, ingestPublicUrl: string): Promise<Warning[]> {
  if (isOwnWebhookUrl(url, ingestPublicUrl)) throw validationFailed("url", "loop", "url is one of this deployment's webhook URLs");
  const verdict = await deps.replay.checkForwardTarget({ url });
  if (verdict.allowed) return [];
  if (verdict.reason === "dns_failure") return [{ code: "dns_failure", message: "url's host does not resolve now; every alert looks it up again." }];
  const reason = refusalReason(verdict);
  if (!reason) throw validationFailed("url", "format");
  throw new AppError("target_not_allowed", `alert channel url refused: ${verdict.reason} (${verdict.category})`, { meta: { reason } });
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

type CreateBody = z.output<typeof createAlertChannelRequest>;

async function createChannel(deps: GatewayDeps, options: GatewayOptions, ctx: Context, auth: AuthState, body: CreateBody): Promise<CreatedAlertChannelJson> {
  if (body.type === "slack" && body.secret !== undefined) throw validationFailed("secret", "unknown", "slack channels take no secret");
  const requested = (body.endpointIds ?? []).map((id) => id.toLowerCase());
  if (!endpointsWithin(auth.endpointIds, requested)) throw forbidden(undefined, "endpointIds");
  const endpointIds = await knownEndpoints(deps, auth.accountId, requested);
  const warnings = await vetChannelUrl(deps, body.url, options.ingestPublicUrl);
  const secret = body.type === "webhook" ? (body.secret ?? generateSecret()) : undefined;
  const sealedSecret = secret ? (await deps.crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed : new Uint8Array();
  const { channel } = await deps.catalog.createAlertChannel({
    accountId: auth.accountId,
    name: body.name,
    type: body.type,
    url: body.url,
    events: [...new Set(body.events)],
    endpointIds,
    sealedSecret,
    audit: auditContext(ctx, auth),
  });
  return { ...alertChannelJson(channel!), ...(secret ? { secret } : {}), ...(warnings.length ? { warnings } : {}) };
}

/** `GET`, `POST /v1/alert-channels`, `DELETE /v1/alert-channels/{id}`, `POST .../{id}/test` (design §18; ADRs 0085, 0086). */
export function alertChannelRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const { catalog } = deps;
  return [
    route({
      method: "GET",
      path: "/v1/alert-channels",
      scope: "alerts:write",
      operationId: "listAlertChannels",
      summary: "List alert channels",
      description:
        "The account's alert channels within the calling key's reach, oldest first, each with how its last alert went " +
        "(`lastDelivery`). Listing needs `alerts:write` too: a Slack incoming webhook's URL is itself a credential. A key " +
        "restricted to endpoints sees only channels restricted to some of its endpoints.",
      tags: ["alerts"],
      extension: true,
      success: { status: 200, schema: alertChannelList, description: "The channels within the caller's reach, oldest first." },
      errors: [],
      async handler(_ctx, { auth }): Promise<AlertChannelListJson> {
        const { channels } = await catalog.listAlertChannels({ accountId: auth.accountId });
        return { items: channels.filter((c) => withinReach(auth, c)).map(alertChannelJson) };
      },
    }),
    route({
      method: "POST",
      path: "/v1/alert-channels",
      scope: "alerts:write",
      operationId: "createAlertChannel",
      summary: "Create an alert channel",
      description:
        "Creates a channel that is told about the `events` it names: a `webhook` channel receives `{\"type\",\"timestamp\"," +
        "\"data\"}` signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`) with " +
        "its `secret` (`whsec_...`, generated when none is given and **shown this once**); a `slack` channel (a Slack " +
        "incoming webhook) receives `{\"text\": ...}`. Alerts go through a durable outbox with retries " +
        `(${ALERT_MAX_ATTEMPTS} attempts, as relay deliveries are retried) and the egress guard. Repeats of one type for one ` +
        `endpoint are coalesced into one alert per WHC_ALERT_COALESCE_S (${ALERT_COALESCE_S} s) carrying \`data.count\`.\n\n` +
        `Errors: 400 \`validation_failed\` (an unknown event, an endpoint the account does not have: \`reason: unknown\`; ` +
        "a `secret` on a slack channel; a URL that is one of the deployment's webhook URLs: `reason: loop`); 400 " +
        "`target_not_allowed` for a URL the egress guard refuses (`details.reason`); 403 `forbidden` (`details.field` " +
        "`endpointIds`) for a restricted key asking for endpoints beyond its own or for every endpoint; 409 `conflict` " +
        `(\`details.field\` \`name\`) for a name the account uses; 429 \`quota_exceeded\` past ${ALERT_CHANNEL_LIMITS.perAccount} ` +
        "channels (`details.quota` `alert_channels`). A URL whose host does not resolve now is saved with a " +
        "`dns_failure` warning.",
      tags: ["alerts"],
      extension: true,
      body: createAlertChannelRequest,
      bodyRequired: true,
      success: { status: 201, schema: createdAlertChannel, description: "Created; a webhook channel's `secret` is shown this once." },
      errors: [400, 403, 409, 413, 415, 429],
      handler: (ctx, { auth, body }) => createChannel(deps, options, ctx, auth, body),
    }),
    route({
      method: "DELETE",
      path: "/v1/alert-channels/{id}",
      scope: "alerts:write",
      operationId: "deleteAlertChannel",
      summary: "Delete an alert channel",
      description:
        "Deletes the channel and every alert waiting for it. Another account's channel, or one beyond the calling key's " +
        "reach, is 404 as an unknown id; a second delete is 404.",
      tags: ["alerts"],
      extension: true,
      success: { status: 204, description: "Deleted." },
      errors: [400],
      async handler(ctx, { auth, params }) {
        const channel = await reachableChannel(deps, auth, params.id!);
        await catalog.deleteAlertChannel({ accountId: auth.accountId, channelId: channel.id, audit: auditContext(ctx, auth, { name: channel.name }) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/alert-channels/{id}/test",
      scope: "alerts:write",
      operationId: "testAlertChannel",
      summary: "Send a test alert",
      description:
        "Queues a `test` alert to this channel, whatever events it names, through the same outbox, egress guard and " +
        "signing as every alert, and answers at once (202) with its id: the channel's `lastDelivery` then shows what the " +
        "channel answered. Tests are never coalesced.",
      tags: ["alerts"],
      extension: true,
      success: { status: 202, schema: alertTestAnswer, description: "Queued." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<AlertTestJson> {
        const channel = await reachableChannel(deps, auth, params.id!);
        const data = { message: `A test alert for channel ${channel.name}.`, channelId: channel.id, channelName: channel.name };
        const { alertIds } = await catalog.raiseAlerts({
          alerts: [{ accountId: auth.accountId, type: "test", dataJson: JSON.stringify(data), channelId: channel.id }],
        });
        const alertId = alertIds[0];
        // The channel went between the read and the raise: as if it had never been there.
        if (!alertId) throw notFound("alert channel");
        return { alertId, state: "pending" };
      },
    }),
  ];
}
