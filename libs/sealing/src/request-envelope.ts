import type { Event, Forward, Header } from "@whc/contracts";
import { sealedText, sealedTextBytes, sealedWithBody, type EnvelopeOpener, type OpenResult } from "./envelope.js";
import { openJoined } from "./aead.js";

/** A captured request's headers in arrival order, as name and value. */
export type RequestHeaderPair = readonly [name: string, value: string];

/** What of a request is sealed beside its body (ADR 0009): everything a listing does not need. */
export interface CapturedRequest {
  /** Sub-path and query after the endpoint's webhookUrl; may be empty. */
  path: string;
  headers: readonly RequestHeaderPair[];
}

/**
 * The packed form of a request: the UTF-8 JSON array `[path, name1, value1, name2, value2...]`.
 * One native stringify and one parse: cheaper on ingest's event loop than writing each string
 * with a length prefix, and about 3 bytes per string over the raw text. Header values are kept
 * as Node hands them over (one character per byte), which UTF-8 carries exactly.
 */
export function packRequest(request: CapturedRequest): Buffer {
  const flat: string[] = [request.path];
  const { headers } = request;
  // Indexed: for-of with destructuring allocated iterator results per header on the capture path.
  for (let i = 0; i < headers.length; i += 1) {
    const pair = headers[i] as RequestHeaderPair;
    flat.push(pair[0], pair[1]);
  }
  return Buffer.from(JSON.stringify(flat), "utf8");
}

/** Throws when the bytes are not a packed request (they opened, so they were sealed by us: a bug). */
export function unpackRequest(packed: Uint8Array): CapturedRequest {
  const flat = JSON.parse(Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength).toString("utf8")) as unknown;
  if (!Array.isArray(flat) || flat.length % 2 !== 1 || !flat.every((s) => typeof s === "string")) {
    throw new Error("not a packed request");
  }
  const strings = flat as string[];
  const headers: RequestHeaderPair[] = [];
  for (let i = 1; i < strings.length; i += 2) headers.push([strings[i] as string, strings[i + 1] as string]);
  return { path: strings[0] as string, headers };
}

/** Whether a stored body and request could be read: `metadata_only` when no body was stored. */
export type CaptureDecryption = "ok" | "failed" | "metadata_only";

/** A stored event with what is sealed opened. */
export interface OpenedCapture {
  /**
   * The event with `path`, `headers` and its deliveries' targets and attempt URLs in clear:
   * opened from what is sealed, or as stored by a version that kept them in clear. Empty when
   * they could not be opened.
   */
  event: Event;
  /** The body in clear; undefined when none is stored or it could not be opened. */
  body: Uint8Array | undefined;
  /**
   * `failed` when the body or the request was stored sealed and cannot be opened (its key left
   * the ring, or it fails its tag); `metadata_only` when no body was stored, whatever the request.
   */
  decryption: CaptureDecryption;
  /** False when the request's headers and path are sealed and could not be opened. */
  requestReadable: boolean;
}

const headerOf = ([name, value]: RequestHeaderPair): Header => ({ $typeName: "webhookcapture.common.v1.Header", name, value });

async function openRequest(opener: EnvelopeOpener, e: Event): Promise<CapturedRequest | undefined> {
  if (!e.sealedRequest || e.sealedRequest.ciphertext.length === 0) return { path: e.path, headers: e.headers.map((h) => [h.name, h.value] as const) };
  const opened = await opener.open(e.endpointId, e.sealedRequest, "request");
  if (!opened.ok) return undefined;
  try {
    return unpackRequest(opened.plaintext);
  } catch {
    return undefined;
  }
}

/**
 * The request and the body (undefined: none stored): sealed as one (ADR 0092), or each alone, as
 * a capture without a body and every capture before that ADR are.
 */
async function openRequestAndBody(opener: EnvelopeOpener, e: Event): Promise<[CapturedRequest | undefined, OpenResult | undefined]> {
  if (!sealedWithBody(e.sealedRequest?.ciphertext)) {
    return Promise.all([openRequest(opener, e), e.bodyStored && e.body ? opener.open(e.endpointId, e.body) : undefined]);
  }
  const failed: OpenResult = { ok: false, reason: "tampered" };
  // Always stored with a body; without one nothing of the request can be read.
  if (!e.body) return [undefined, failed];
  const opened = await opener.open(e.endpointId, e.body, "capture");
  if (!opened.ok) return [undefined, opened];
  const joined = openJoined(opened.plaintext);
  let request: CapturedRequest | undefined;
  try {
    request = joined && unpackRequest(joined.head);
  } catch {
    request = undefined;
  }
  // Opened, so sealed by us; a plaintext that does not split is a bug, and reads as failed.
  if (!joined || !request) return [undefined, failed];
  return [request, e.bodyStored ? { ok: true, plaintext: joined.tail } : undefined];
}

/** A URL field as stored: a sealedText under the event's data key is opened ("" when it cannot be), any other is as it was written. */
async function openUrl(opener: EnvelopeOpener, e: Event, text: string): Promise<string> {
  const sealed = sealedTextBytes(text);
  if (!sealed) return text;
  if (!e.sealedRequest) return "";
  const opened = await opener.open(e.endpointId, { ...e.sealedRequest, ciphertext: sealed }, "url");
  return opened.ok ? opened.plaintext.toString("utf8") : "";
}

async function openForward(opener: EnvelopeOpener, e: Event, f: Forward): Promise<Forward> {
  const [target, ...urls] = await Promise.all([openUrl(opener, e, f.target), ...f.attempts.map((a) => openUrl(opener, e, a.url))]);
  return { ...f, target: target as string, attempts: f.attempts.map((a, i) => ({ ...a, url: urls[i] as string })) };
}

/**
 * A URL about to be stored in a forward's record (its target, an attempt's URL), which may
 * carry the capture's sub-path and query: sealed under the capture's data key when the
 * capture's request is sealed. An event stored before that, or whose key is gone (its path
 * could not be opened, so the URL holds none of it), keeps the URL in clear.
 */
export async function sealUrlFor(opener: EnvelopeOpener, e: Event, url: string): Promise<string> {
  if (!e.sealedRequest || e.sealedRequest.ciphertext.length === 0 || sealedTextBytes(url)) return url;
  const sealed = await opener.sealUnder(e.endpointId, e.sealedRequest, Buffer.from(url, "utf8"), "url");
  return sealed ? sealedText(sealed) : url;
}

/**
 * The one way a reader (gateway, replay, forwarding) opens a stored event: its body, its
 * request and its forward's URLs under the event's data key, unwrapped once by the opener's
 * cache. A key gone or a failed tag is `failed` for this event, never an error; a crypto
 * outage throws, as for bodies.
 */
export async function openCapture(opener: EnvelopeOpener, e: Event): Promise<OpenedCapture> {
  const [[request, body], forward, deliveries] = await Promise.all([
    openRequestAndBody(opener, e),
    e.forward && openForward(opener, e, e.forward),
    Promise.all(e.deliveries.map((d) => openForward(opener, e, d))),
  ]);
  const event: Event = { ...e, path: request?.path ?? "", headers: (request?.headers ?? []).map(headerOf), forward, deliveries };
  let decryption: CaptureDecryption = "metadata_only";
  if (body) decryption = body.ok && request ? "ok" : "failed";
  return { event, body: body?.ok ? body.plaintext : undefined, decryption, requestReadable: request !== undefined };
}
