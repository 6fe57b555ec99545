import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { header, slackUrlVerificationChallenge, type HeaderPair } from "@whc/signatures";
import { jsonAnswer, textAnswer, type RenderedAnswer } from "./answer-types.js";

/**
 * The providers' verification handshakes (design §10): requests a provider sends to prove that
 * a URL wants its webhooks, answered as the provider documents. Each is recognised by the
 * request's shape alone (method, query, headers, body), never by the endpoint's configured
 * provider: a user pasting the webhookUrl into Zoom has often not told us it is for Zoom.
 */

import { HANDSHAKE_NAMES, type HandshakeName } from "@whc/api-model";
export { HANDSHAKE_NAMES, type HandshakeName };

export interface HandshakeRequest {
  method: string;
  /** The sub-path after the webhookUrl with its query, as received: "/a?b=1", "?b=1" or "". */
  path: string;
  headers: readonly HeaderPair[];
  /** The whole body; pass an empty one when it was cut off at the inbound limit. */
  body: Uint8Array;
}

/** What a detector sees: the request with its query parsed once for all of them. */
export interface HandshakeView extends HandshakeRequest {
  query: URLSearchParams;
}

export interface Handshake<Found> {
  name: HandshakeName;
  /** Answered only when the endpoint has a secret; without one the request is an ordinary capture. */
  needsSecret: boolean;
  /** The provider's page this entry follows. */
  documentedAt: string;
  /** What the answer needs from the request, or undefined when the request is not this handshake. */
  detect(req: HandshakeView): Found | undefined;
  /** `secret` is the endpoint's (non-empty) when `needsSecret`, else possibly empty. */
  answer(found: Found, secret: Uint8Array): RenderedAnswer;
}

/**
 * The most a handshake echoes back. Every provider's token is far shorter (Slack's challenge
 * is 52 characters, Zoom's plainToken 22, Asana's secret 64); a longer one is not a handshake
 * but someone using the endpoint to reflect their own text.
 */
export const MAX_REFLECTED_BYTES = 1024;

/** A value that may be echoed into a body: present, non-empty, bounded. */
export function reflectable(value: string | undefined | null): value is string {
  return typeof value === "string" && value.length > 0 && Buffer.byteLength(value, "utf8") <= MAX_REFLECTED_BYTES;
}

/** Visible ASCII, inner spaces allowed: nothing that could end the header line or start another. */
const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** A value that may be echoed into a response header as it is. */
export function headerReflectable(value: string | undefined): value is string {
  return value !== undefined && value.length <= MAX_REFLECTED_BYTES && HEADER_SAFE.test(value);
}

/** No query: one shared, empty set of parameters (detectors only read it). */
const NO_QUERY = new URLSearchParams();

function queryOf(path: string): URLSearchParams {
  const at = path.indexOf("?");
  return at < 0 ? NO_QUERY : new URLSearchParams(path.slice(at + 1));
}

function contains(body: Uint8Array, marker: Buffer): boolean {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).includes(marker);
}

const SLACK_MARKER = Buffer.from("url_verification");
const ZOOM_MARKER = Buffer.from("endpoint.url_validation");

function ownObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function ownField(value: unknown, name: string): unknown {
  const object = ownObject(value);
  return object && Object.hasOwn(object, name) ? object[name] : undefined;
}

/** Zoom's validation body is a few hundred bytes; anything this large is not one and is not parsed. */
const MAX_ZOOM_BODY_BYTES = 16 * 1024;

function parseSmallJson(body: Uint8Array): unknown {
  if (body.length > MAX_ZOOM_BODY_BYTES) return undefined;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
}

/** Constant time whatever the lengths: both sides are hashed first, so neither length leaks. */
function sameSecret(offered: string, secret: Uint8Array): boolean {
  const digest = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest();
  return timingSafeEqual(digest(offered), digest(secret));
}

function hmacSha256(secret: Uint8Array, message: string): Buffer {
  return createHmac("sha256", secret).update(message, "utf8").digest();
}

const slack: Handshake<string> = {
  name: "slack_url_verification",
  needsSecret: false,
  documentedAt: "https://api.slack.com/events/url_verification",
  detect(req) {
    // The marker test spares the JSON scan on every ordinary POST.
    if (req.method !== "POST" || !contains(req.body, SLACK_MARKER)) return undefined;
    const challenge = slackUrlVerificationChallenge(req.body);
    return reflectable(challenge) ? challenge : undefined;
  },
  // Slack accepts plain text, a form or JSON; JSON {"challenge"} is what this endpoint has always answered.
  answer: (challenge) => jsonAnswer(200, { challenge }),
};

const zoom: Handshake<string> = {
  name: "zoom_url_validation",
  needsSecret: true,
  documentedAt: "https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint",
  detect(req) {
    if (req.method !== "POST" || !contains(req.body, ZOOM_MARKER)) return undefined;
    const json = parseSmallJson(req.body);
    if (ownField(json, "event") !== "endpoint.url_validation") return undefined;
    const plainToken = ownField(ownField(json, "payload"), "plainToken");
    return typeof plainToken === "string" && reflectable(plainToken) ? plainToken : undefined;
  },
  answer: (plainToken, secret) => jsonAnswer(200, { plainToken, encryptedToken: hmacSha256(secret, plainToken).toString("hex") }),
};

const asana: Handshake<string> = {
  name: "asana_hook_secret",
  needsSecret: false,
  documentedAt: "https://developers.asana.com/reference/createwebhook",
  detect(req) {
    const secret = header(req.headers, "x-hook-secret");
    return headerReflectable(secret) ? secret : undefined;
  },
  // Asana accepts 200 or 204 with the matching header; its example answers 200 with no body.
  answer: (secret) => ({ status: 200, headers: [["X-Hook-Secret", secret]], body: new Uint8Array(0), delayMs: 0 }),
};

interface MetaVerification {
  verifyToken: string;
  challenge: string;
}

const meta: Handshake<MetaVerification> = {
  name: "meta_verify_token",
  needsSecret: true,
  documentedAt: "https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests",
  detect({ method, query }) {
    const challenge = query.get("hub.challenge");
    if (method !== "GET" || query.get("hub.mode") !== "subscribe" || !reflectable(challenge)) return undefined;
    return { verifyToken: query.get("hub.verify_token") ?? "", challenge };
  },
  answer({ verifyToken, challenge }, secret) {
    if (sameSecret(verifyToken, secret)) return textAnswer(200, challenge);
    return textAnswer(403, "hub.verify_token is not this endpoint's secret.");
  },
};

const x: Handshake<string> = {
  name: "x_crc",
  needsSecret: true,
  documentedAt: "https://docs.x.com/x-api/webhooks/quickstart",
  detect: ({ method, query }) => {
    const token = query.get("crc_token");
    return method === "GET" && reflectable(token) ? token : undefined;
  },
  answer: (token, secret) => jsonAnswer(200, { response_token: `sha256=${hmacSha256(secret, token).toString("base64")}` }),
};

const graph: Handshake<string> = {
  name: "graph_validation_token",
  needsSecret: false,
  documentedAt: "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#notificationurl-validation",
  // Any method: Graph validates with POST. URLSearchParams has already URL-decoded the token, as Graph requires.
  detect: ({ query }) => {
    const token = query.get("validationToken");
    return reflectable(token) ? token : undefined;
  },
  answer: (token) => textAnswer(200, token),
};

const dropbox: Handshake<string> = {
  name: "dropbox_challenge",
  needsSecret: false,
  documentedAt: "https://www.dropbox.com/developers/reference/webhooks#documentation",
  detect: ({ method, query }) => {
    const challenge = query.get("challenge");
    return method === "GET" && reflectable(challenge) ? challenge : undefined;
  },
  // Dropbox asks for text/plain and nosniff, against reflected XSS; textAnswer sets both.
  answer: (challenge) => textAnswer(200, challenge),
};

/**
 * Every handshake, in the order they are tried; the first that recognises a request answers it.
 * Body-shaped ones come first: their markers are the most specific.
 */
export const HANDSHAKES: readonly Handshake<unknown>[] = [slack, zoom, asana, meta, x, graph, dropbox];

const NO_SECRET = new Uint8Array(0);

/**
 * The handshake this request is, answered; undefined when it is none (or one needing a secret
 * the endpoint does not have), and the request is answered like any other. An empty secret
 * counts as none: it would let an empty verify token pass. A handshake answer never waits
 * (`delayMs` 0, whatever the endpoint configures): Slack, Zoom and X give up after 3 seconds.
 */
export function findHandshake(req: HandshakeRequest, secret: Uint8Array | undefined): { name: HandshakeName; answer: RenderedAnswer } | undefined {
  // Written out, not spread: this runs on every capture (design §20).
  const view: HandshakeView = { method: req.method, path: req.path, headers: req.headers, body: req.body, query: queryOf(req.path) };
  const usable = secret !== undefined && secret.length > 0 ? secret : undefined;
  for (const handshake of HANDSHAKES) {
    if (handshake.needsSecret && !usable) continue;
    const found = handshake.detect(view);
    if (found !== undefined) return { name: handshake.name, answer: handshake.answer(found, usable ?? NO_SECRET) };
  }
  return undefined;
}
