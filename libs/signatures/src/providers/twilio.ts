import { createHash } from "node:crypto";
import { anyEqual, decodeBase64, decodeHex, hmac } from "../crypto.js";
import { formField } from "../body.js";
import { firstString, isForm, nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Twilio-Signature";
const SHA1_BYTES = 20;
/** Twilio appends this to the URL of a JSON request: the hex SHA-256 of the body, which the URL's signature then covers. */
const BODY_HASH_PARAM = "bodySHA256";
/** The form fields Twilio's callbacks name what happened with, most specific first. */
const FORM_EVENT_FIELDS = ["EventType", "StatusCallbackEvent", "MessageStatus", "CallStatus", "SmsStatus"] as const;

const utf8 = new TextDecoder("utf-8");

/**
 * What Twilio signs for a form request: the URL, then each POST parameter sorted by name as
 * name + value with no separators; a repeated name contributes each distinct value, sorted.
 */
function signedText(url: string, body: Uint8Array): string {
  const params = new Map<string, Set<string>>();
  if (body.length > 0) {
    for (const [name, value] of new URLSearchParams(utf8.decode(body))) {
      const values = params.get(name) ?? new Set<string>();
      values.add(value);
      params.set(name, values);
    }
  }
  let text = url;
  for (const name of [...params.keys()].sort()) for (const value of [...params.get(name)!].sort()) text += name + value;
  return text;
}

/** The `bodySHA256` query parameter of a URL Twilio called with a JSON body; undefined for a form request. */
function bodyHashParam(url: string): string | undefined {
  const query = url.indexOf("?");
  if (query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1).split("#")[0]).get(BODY_HASH_PARAM) ?? undefined;
}

/**
 * The URL as given, without its port and with the scheme's default port: behind a proxy the
 * port Twilio signed is not always the one the URL was configured with, and Twilio's own
 * validateRequest tries these same spellings.
 */
function urlSpellings(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (match === null) return [url];
  const [, scheme = "", authority = "", rest = ""] = match;
  const host = authority.replace(/:[0-9]*$/, "");
  const defaultPort = scheme.toLowerCase() === "https://" ? ":443" : ":80";
  return [...new Set([url, scheme + host + rest, scheme + host + defaultPort + rest])];
}

/**
 * `X-Twilio-Signature: <base64 HMAC-SHA1(auth token, url + sorted form parameters)>`, where url is
 * the full URL Twilio called, query string included. For a JSON body Twilio adds `bodySHA256=<hex
 * SHA-256 of the body>` to the URL and signs the URL alone; the body then has to match that hash.
 * Without a known URL (`url` undefined) the empty string is signed, which Twilio never sends, so
 * such a capture can only fail with signature_mismatch.
 */
export const twilio: ProviderScheme = {
  name: "twilio",
  signs: "base64 HMAC-SHA1 of the full URL plus the form parameters sorted by name (name+value), or of the URL with bodySHA256 for JSON bodies",
  label: "Twilio",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: undefined,
  // The same on every retry of a callback.
  deliveryId: headerId("I-Twilio-Idempotency-Token"),
  secretFormat: {
    description:
      "The account's Auth Token (Twilio Console, Account Info; the primary one, a secondary token signs nothing until promoted), not an API key secret. Verification also needs the ingest's public URL (WHC_INGEST_PUBLIC_URL): Twilio signs the URL it called.",
    example: "0123456789abcdef0123456789abcdef",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const signature = decodeBase64(value);
    if (signature?.length !== SHA1_BYTES) return malformedSignature();
    const url = input.url ?? "";
    const bodyHash = bodyHashParam(url);
    if (bodyHash !== undefined) {
      const urlSigned = urlSpellings(url).some((u) => anyEqual([signature], hmac("sha1", input.secret, u)));
      const hash = decodeHex(bodyHash);
      const bodyMatches = hash !== undefined && anyEqual([hash], createHash("sha256").update(input.body).digest());
      return matched(urlSigned && bodyMatches);
    }
    const expected = urlSpellings(url).map((u) => hmac("sha1", input.secret, signedText(u, input.body)));
    return matched(expected.some((digest) => anyEqual([signature], digest)));
  },

  /**
   * Twilio's form callbacks name no event as such: the TaskRouter and Conversations `EventType`,
   * a conference's `StatusCallbackEvent`, else the message or call status the callback reports
   * (`delivered`, `completed`). JSON bodies (Event Streams, some newer products) carry `type`.
   */
  eventType(headers, body) {
    const json = jsonFields(body, { type: true });
    if (json !== undefined) return firstString(json, "type");
    if (!isForm(header(headers, "content-type") ?? "application/x-www-form-urlencoded")) return undefined;
    for (const name of FORM_EVENT_FIELDS) {
      const value = nonEmptyString(formField(body, name));
      if (value !== undefined) return value;
    }
    return undefined;
  },

  /**
   * Signs toward `url` as Twilio would: the form parameters of the body, or, when the URL already
   * carries bodySHA256 (a JSON request), the URL alone. Headers cannot add bodySHA256 to a URL
   * that lacks it, so a JSON body replayed to a plain URL is signed as a form.
   */
  sign({ secret, body, url = "" }) {
    const text = bodyHashParam(url) === undefined ? signedText(url, body) : url;
    return [[SIGNATURE_HEADER, hmac("sha1", secret, text).toString("base64")]];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
