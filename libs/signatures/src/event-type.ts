import { header, type HeaderPair } from "./headers.js";
import type { Provider } from "./types.js";

const MAX_TYPE = 200;
const decoder = new TextDecoder("utf-8", { fatal: true });

function text(body: Uint8Array): string | undefined {
  if (body.length === 0 || body.length > 4 * 1024 * 1024) return undefined;
  try {
    return decoder.decode(body);
  } catch {
    return undefined;
  }
}

export function jsonObject(body: Uint8Array): Record<string, unknown> | undefined {
  const t = text(body);
  if (t === undefined || !/^\s*\{/.test(t)) return undefined;
  try {
    const value = JSON.parse(t) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Slack interactivity posts `payload=<urlencoded JSON>` as a form. */
function slackForm(headers: readonly HeaderPair[], body: Uint8Array): Record<string, unknown> | undefined {
  if (!(header(headers, "content-type") ?? "").toLowerCase().includes("application/x-www-form-urlencoded")) return undefined;
  const t = text(body);
  const payload = t === undefined ? null : new URLSearchParams(t).get("payload");
  if (!payload) return undefined;
  return jsonObject(Buffer.from(payload, "utf8"));
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value.slice(0, MAX_TYPE) : undefined;
}

export function canonicalEventType(provider: Provider, headers: readonly HeaderPair[], body: Uint8Array): string {
  switch (provider) {
    case "github": {
      const event = header(headers, "x-github-event");
      if (!event) return "";
      const action = str(jsonObject(body)?.action);
      return (action ? `${event}.${action}` : event).slice(0, MAX_TYPE);
    }
    case "slack": {
      const json = jsonObject(body) ?? slackForm(headers, body);
      const inner = json?.event;
      return str(typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>).type : undefined) ?? str(json?.type) ?? "";
    }
    case "shopify":
      return (header(headers, "x-shopify-topic") ?? "").slice(0, MAX_TYPE);
    case "stripe":
    case "standard_webhooks":
      return str(jsonObject(body)?.type) ?? "";
    case "generic": {
      const json = jsonObject(body);
      return str(json?.type) ?? str(json?.event) ?? str(json?.eventType) ?? "";
    }
  }
}

/** Slack's url_verification handshake: answer with the challenge. */
export function slackUrlVerificationChallenge(body: Uint8Array): string | undefined {
  const json = jsonObject(body);
  return json?.type === "url_verification" && typeof json.challenge === "string" ? json.challenge : undefined;
}
