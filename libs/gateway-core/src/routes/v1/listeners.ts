import { LISTENER_HEARTBEAT_S, LISTENER_LIMITS, LISTENER_STALL_S, listenerHeartbeat, listenerList, listenerView, type ListenerJson, type ListenerListJson } from "@whc/api-model";
import { listenerJson } from "@whc/api-model/present";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";

/** Listener liveness (design §19; ADR 0062): kept by the catalog, so every gateway answers the same. */
export function listenerRoutes(deps: GatewayDeps): Route[] {
  const { catalog } = deps;
  return [
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/listeners",
      scope: "events:read",
      operationId: "listListeners",
      summary: "List the running listeners of an endpoint",
      description:
        "Every `whc listen` following this endpoint that heartbeated within `WHC_LISTENER_TTL_S` (30 s), oldest first: " +
        "where it runs, when it was last heard from, its cursor (the last event it is past), how many events it is " +
        `behind (\`lagEvents\`, counted up to ${LISTENER_LIMITS.lagBound} at its last heartbeat), the last error it met, ` +
        `and \`stalled\` when it has been behind for ${LISTENER_STALL_S} s without its lag ever falling. A listener that stops without ` +
        "saying goodbye (killed, its laptop asleep) disappears on its own.",
      tags: ["listeners"],
      extension: true,
      success: { status: 200, schema: listenerList, description: "The endpoint's live listeners." },
      errors: [400],
      async handler(_ctx, { auth, params }): Promise<ListenerListJson> {
        const { listeners } = await catalog.listListeners({ accountId: auth.accountId, endpointId: params.endpointId! });
        return { items: listeners.map(listenerJson) };
      },
    }),
    route({
      method: "PUT",
      path: "/v1/endpoints/{endpointId}/listeners/{listenerId}",
      scope: "events:read",
      operationId: "heartbeatListener",
      summary: "Register a listener, or heartbeat one",
      description:
        `What a running \`whc listen\` sends every ${LISTENER_HEARTBEAT_S} s: registers the listener under the id it chose ` +
        "(a UUID) or refreshes it, with its cursor and last error, and answers it as listed, its lag counted now. A " +
        "listener not heard from again within `WHC_LISTENER_TTL_S` (30 s) is gone.\n\n" +
        `Errors: 429 \`quota_exceeded\` (\`details.quota\` \`listeners\`) when the endpoint already has ${LISTENER_LIMITS.perEndpoint} ` +
        "other live listeners.",
      tags: ["listeners"],
      extension: true,
      body: listenerHeartbeat,
      bodyRequired: true,
      success: { status: 200, schema: listenerView, description: "The listener as saved." },
      errors: [400, 413, 415, 429],
      async handler(_ctx, { auth, params, body }): Promise<ListenerJson> {
        const at = body.cursor ? { cursorAtMs: BigInt(Date.parse(body.cursor.at)), cursorId: body.cursor.id } : {};
        const { listener } = await catalog.putListener({
          accountId: auth.accountId,
          listener: {
            id: params.listenerId!,
            endpointId: params.endpointId!,
            host: body.host,
            startedAtMs: BigInt(Date.parse(body.startedAt)),
            lastError: body.lastError ?? "",
            ...at,
          },
        });
        return listenerJson(listener!);
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/endpoints/{endpointId}/listeners/{listenerId}",
      scope: "events:read",
      operationId: "deleteListener",
      summary: "Unregister a listener",
      description:
        "What `whc listen` sends when it stops: the listener leaves the list at once instead of " +
        "`WHC_LISTENER_TTL_S` after its last heartbeat. 204 also when it was gone already.",
      tags: ["listeners"],
      extension: true,
      success: { status: 204, description: "The listener is no longer listed." },
      errors: [400],
      async handler(_ctx, { auth, params }) {
        await catalog.deleteListener({ accountId: auth.accountId, endpointId: params.endpointId!, listenerId: params.listenerId! });
      },
    }),
  ];
}
