import { randomBytes, randomUUID } from "node:crypto";
import type { HeaderPair } from "./headers.js";

/** A JSON value as a sample body holds it (and as `set` writes into it). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A sample's body before it is written out: a JSON document, or form fields in order. */
export type SampleBody = { json: JsonValue } | { form: [string, string][] };

/** One request as the provider sends it, before signing. */
export interface SampleRequest {
  method: "POST";
  /** The body's media type (Twilio posts forms, the rest JSON). */
  contentType: string;
  /** What the provider sends besides its signature: event type headers, delivery ids, user agent. */
  headers: HeaderPair[];
  body: SampleBody;
}

const ALPHABETS = {
  alnum: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
  lower: "0123456789abcdefghijklmnopqrstuvwxyz",
  upper: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  hex: "0123456789abcdef",
  digits: "0123456789",
} as const;

/** What a sample is built from: the clock and fresh ids, new on every trigger. */
export interface SampleContext {
  nowMs: number;
  /** nowMs in Unix seconds. */
  unix: number;
  /** nowMs as RFC 3339 with milliseconds, UTC. */
  iso: string;
  /** `prefix` and `length` random characters of the alphabet (alnum by default): `evt_3Pq...`. */
  id(prefix: string, length?: number, alphabet?: keyof typeof ALPHABETS): string;
  uuid(): string;
  /** A random integer in [min, max], for numeric ids. */
  int(min: number, max: number): number;
}

export function sampleContext(nowMs: number): SampleContext {
  const pick = (length: number, alphabet: string) => {
    const bytes = randomBytes(length);
    let out = "";
    for (const b of bytes) out += alphabet[b % alphabet.length];
    return out;
  };
  return {
    nowMs,
    unix: Math.floor(nowMs / 1000),
    iso: new Date(nowMs).toISOString(),
    id: (prefix, length = 24, alphabet = "alnum") => prefix + pick(length, ALPHABETS[alphabet]),
    uuid: () => randomUUID(),
    int: (min, max) => min + (randomBytes(4).readUInt32BE(0) % (max - min + 1)),
  };
}

/** One event type of a provider, built fresh each time it is triggered. */
export interface Sample {
  /** The provider's name for the event, exactly what ingest's canonicalEventType reads from it. */
  eventType: string;
  build(ctx: SampleContext): SampleRequest;
}

/** Every sample of one provider; listed once per provider in the registry's `samples`. */
export interface ProviderSamples {
  samples: readonly Sample[];
  /**
   * For a scheme whose signature lives in the body (Mailgun): the body with it written in,
   * computed with `secret`, before any header is signed.
   */
  signBody?(body: SampleBody, secret: Uint8Array, ctx: SampleContext): SampleBody;
}

/** JSON bodies are sent as JSON: `application/json`. */
export const JSON_TYPE = "application/json";
export const FORM_TYPE = "application/x-www-form-urlencoded";

/** A JSON sample's request, POSTed with `headers`. */
export function jsonRequest(headers: HeaderPair[], json: JsonValue, contentType = JSON_TYPE): SampleRequest {
  return { method: "POST", contentType, headers, body: { json } };
}

/** A form sample's request (Twilio): fields in the order the provider sends them. */
export function formRequest(headers: HeaderPair[], form: [string, string][]): SampleRequest {
  return { method: "POST", contentType: FORM_TYPE, headers, body: { form } };
}

/** The body's bytes: compact JSON (as most providers send it), or the form url-encoded. */
export function sampleBodyBytes(body: SampleBody): Buffer {
  if ("json" in body) return Buffer.from(JSON.stringify(body.json), "utf8");
  return Buffer.from(new URLSearchParams(body.form).toString(), "utf8");
}
