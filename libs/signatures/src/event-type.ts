import { formField } from "./body.js";
import { jsonFields, objectField, stringField, type FieldSpec, type Fields } from "./json-fields.js";
import { header, type HeaderPair } from "./headers.js";
import type { Provider } from "./types.js";

export const MAX_EVENT_TYPE_LENGTH = 200;

/** At most 200 UTF-16 code units, never ending in half a surrogate pair. */
function capped(text: string): string {
  if (text.length <= MAX_EVENT_TYPE_LENGTH) return text;
  const cut = text.slice(0, MAX_EVENT_TYPE_LENGTH);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function field(fields: Fields | undefined, ...names: readonly string[]): string | undefined {
  if (fields === undefined) return undefined;
  for (const name of names) {
    const value = nonEmptyString(fields[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

const TYPE: FieldSpec = { type: true };
const SLACK: FieldSpec = { type: true, event: { type: true } };
const GITHUB: FieldSpec = { action: true };
const GENERIC: FieldSpec = { type: true, event: true, eventType: true };
const CHALLENGE: FieldSpec = { type: true, challenge: true };

/** The `payload` field of a form body, read for the fields of the JSON it holds. */
function formPayload(body: Uint8Array, spec: FieldSpec): Fields | undefined {
  const payload = formField(body, "payload");
  return payload === undefined ? undefined : jsonFields(Buffer.from(payload), spec);
}

/**
 * Slack posts JSON for the Events API, but a form with the JSON in its `payload` field for
 * interactivity. The form is recognised by its content, not only its Content-Type, so captures
 * whose Content-Type was lost are still named.
 */
function slackType(headers: readonly HeaderPair[], body: Uint8Array): string | undefined {
  const json = jsonFields(body, SLACK);
  if (json !== undefined) return field(objectField(json, "event"), "type") ?? field(json, "type");
  const contentType = header(headers, "content-type")?.toLowerCase();
  if (contentType !== undefined && !contentType.startsWith("application/x-www-form-urlencoded")) return undefined;
  return field(formPayload(body, TYPE), "type");
}

/**
 * GitHub sends JSON, or, for hooks configured with content type
 * application/x-www-form-urlencoded, a form whose `payload` field holds the same JSON.
 */
function githubPayload(headers: readonly HeaderPair[], body: Uint8Array): Fields | undefined {
  const contentType = header(headers, "content-type")?.toLowerCase();
  return contentType?.startsWith("application/x-www-form-urlencoded") ? formPayload(body, GITHUB) : jsonFields(body, GITHUB);
}

function githubType(headers: readonly HeaderPair[], body: Uint8Array): string | undefined {
  const event = nonEmptyString(header(headers, "X-GitHub-Event"));
  if (event === undefined) return undefined;
  const action = field(githubPayload(headers, body), "action");
  return action === undefined ? event : `${event}.${action}`;
}

/** The provider's event type name for this capture, "" when unknown. */
export function canonicalEventType(provider: Provider, headers: readonly HeaderPair[], body: Uint8Array): string {
  let type: string | undefined;
  switch (provider) {
    case "stripe":
    case "standard_webhooks":
      type = field(jsonFields(body, TYPE), "type");
      break;
    case "github":
      type = githubType(headers, body);
      break;
    case "slack":
      type = slackType(headers, body);
      break;
    case "shopify":
      type = nonEmptyString(header(headers, "X-Shopify-Topic"));
      break;
    case "generic":
      type = field(jsonFields(body, GENERIC), "type", "event", "eventType");
      break;
  }
  return type === undefined ? "" : capped(type);
}

/** Slack's url_verification handshake: the challenge string to answer with, else undefined. */
export function slackUrlVerificationChallenge(body: Uint8Array): string | undefined {
  const json = jsonFields(body, CHALLENGE);
  return json?.["type"] === "url_verification" ? stringField(json, "challenge") : undefined;
}
