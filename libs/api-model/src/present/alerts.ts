import type { AlertChannel } from "@whc/contracts";
import type { AlertChannelJson, AlertChannelType, AlertEvent, AlertState } from "../index.js";
import { isoTime } from "./json.js";

/** A channel as the catalog keeps it (design §18), as `GET /v1/alert-channels` shows it: never its secret. */
export function alertChannelJson(c: AlertChannel): AlertChannelJson {
  const d = c.lastDelivery;
  return {
    id: c.id,
    name: c.name,
    type: c.type as AlertChannelType,
    url: c.url,
    events: c.events as AlertEvent[],
    endpointIds: c.endpointIds,
    secretSet: c.secretSet,
    createdAt: isoTime(c.createdAtMs),
    lastDelivery: d
      ? {
          alertId: d.alertId,
          type: d.type as AlertEvent,
          at: isoTime(d.atMs),
          state: d.state as AlertState,
          attempts: d.attempts,
          status: d.status || null,
          error: d.error || null,
        }
      : null,
  };
}
