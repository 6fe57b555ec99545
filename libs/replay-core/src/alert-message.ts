import type { Alert, AlertChannel } from "@whc/contracts";
import type { AlertMessageJson } from "@whc/api-model";
import { signHeaders } from "@whc/signatures";

/** What one alert sends: a JSON POST body and its headers. */
export interface AlertRequest {
  body: Buffer;
  headers: [string, string][];
}

const USER_AGENT = "webhook-capture-alerts/0.1";

const isoOf = (ms: bigint) => new Date(Number(ms)).toISOString();

function dataOf(alert: Alert): Record<string, unknown> {
  try {
    const parsed = JSON.parse(alert.dataJson) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The message of a webhook channel (design §18): `{"type","timestamp","data"}`, `timestamp` the
 * last occurrence's time, `data` what the last occurrence carried plus its endpoint and how many
 * occurrences the alert stands for. Built from the stored alert alone, so every attempt sends
 * the same bytes.
 */
export function alertMessage(alert: Alert): AlertMessageJson {
  return {
    type: alert.type as AlertMessageJson["type"],
    timestamp: isoOf(alert.lastAtMs),
    data: {
      ...dataOf(alert),
      ...(alert.endpointId ? { endpointId: alert.endpointId } : {}),
      ...(alert.endpointSlug ? { endpointSlug: alert.endpointSlug } : {}),
      count: alert.count,
      firstAt: isoOf(alert.firstAtMs),
      lastAt: isoOf(alert.lastAtMs),
    },
  };
}

const s = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : undefined);

/** What happened, in one line a person reads in Slack. */
export function alertText(message: AlertMessageJson): string {
  const d = message.data;
  const where = d.endpointSlug ? ` on endpoint *${d.endpointSlug}*` : d.endpointId ? ` on endpoint ${d.endpointId}` : "";
  const times = d.count > 1 ? ` (${d.count} times since ${d.firstAt})` : "";
  const details: string[] = [];
  switch (message.type) {
    case "delivery.exhausted":
    case "delivery.failed": {
      const last = s(d.status) ? `HTTP ${s(d.status)}` : s(d.error);
      details.push(`event ${s(d.eventId) ?? "?"} after ${s(d.attempts) ?? "?"} attempt(s)${last ? `, last: ${last}` : ""}`);
      break;
    }
    case "signature.failed":
      details.push(`event ${s(d.eventId) ?? "?"} (${s(d.provider) ?? "?"}): ${s(d.reason) ?? "failed"}`);
      break;
    case "listener.stalled":
      details.push(`listener on ${s(d.host) ?? "?"} is ${s(d.lagEvents) ?? "?"} event(s) behind since ${s(d.behindSince) ?? "?"}`);
      break;
    case "test":
      details.push(s(d.message) ?? "a test alert");
      break;
    default:
      break;
  }
  return `Webhook Capture: ${message.type}${where}${times}${details.length ? `: ${details.join("; ")}` : ""}`;
}

/**
 * The request for one attempt. A webhook channel gets the message signed as Standard Webhooks
 * with its secret (`webhook-id` is the alert's id on every attempt, so a receiver can drop a
 * repeat; `webhook-timestamp` is now); a Slack channel gets `{"text": ...}`.
 */
export function alertRequest(alert: Alert, channel: AlertChannel, secret: Uint8Array | undefined, nowMs: number): AlertRequest {
  const message = alertMessage(alert);
  const base: [string, string][] = [
    ["Content-Type", "application/json"],
    ["User-Agent", USER_AGENT],
  ];
  if (channel.type === "slack") return { body: Buffer.from(JSON.stringify({ text: alertText(message) })), headers: base };
  const body = Buffer.from(JSON.stringify(message));
  const signed = secret ? signHeaders({ provider: "standard_webhooks", secret, body, nowMs, headers: [["webhook-id", alert.id]] }) : [];
  return { body, headers: [...base, ...signed.map(([name, value]) => [name, value] as [string, string])] };
}
