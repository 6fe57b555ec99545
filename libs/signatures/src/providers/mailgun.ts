import { formField } from "../body.js";
import { anyEqual, decodeHex, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { jsonFields, objectField, stringField, type FieldSpec } from "../json-fields.js";
import { malformedSignature, matched, missingSignature, parseUnixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNED_FIELDS = ["timestamp", "token", "signature", "parent-signature"] as const;
const SIGNATURE_SPEC: FieldSpec = { signature: Object.fromEntries(SIGNED_FIELDS.map((name) => [name, true])) };
const EVENT_SPEC: FieldSpec = { "event-data": { event: true } };

type Signed = Partial<Record<(typeof SIGNED_FIELDS)[number], string>>;

/**
 * The signature fields: the `signature` object of a JSON webhook, else the top-level form fields
 * of a legacy webhook or a route's forward; undefined when the body carries neither.
 */
function signedFields(body: Uint8Array): Signed | undefined {
  const json = jsonFields(body, SIGNATURE_SPEC);
  if (json !== undefined) {
    const object = objectField(json, "signature");
    return object === undefined ? undefined : Object.fromEntries(SIGNED_FIELDS.map((name) => [name, stringField(object, name)]));
  }
  const form = Object.fromEntries(SIGNED_FIELDS.map((name) => [name, formField(body, name)]));
  return form.signature === undefined && form.token === undefined && form.timestamp === undefined ? undefined : form;
}

/**
 * Mailgun signs in the body, not a header: a `signature` object of `timestamp`, `token` (50
 * random characters) and `signature`, the hex HMAC-SHA256 of timestamp + token with the webhook
 * signing key; a subaccount's event adds `parent-signature`, made with the primary account's key,
 * and either verifies. The signature covers neither the event data nor the URL, only the token,
 * and Mailgun documents no freshness window (checking one is left optional), so none is applied.
 *
 * Mailgun sends no header of its own, so it is never detected (detect answers false): the
 * endpoint has to be configured as mailgun. Re-signing cannot work either: the signature lives in
 * the body, which a replay sends unchanged, so sign writes no header and the original signature
 * travels as it was.
 */
export const mailgun: ProviderScheme = {
  name: "mailgun",
  signs: "hex HMAC-SHA256 of the body's signature.timestamp + signature.token (the event data is not signed)",
  label: "Mailgun",
  signatureHeaders: [],
  toleranceS: undefined,
  deliveryId: bodyId("event-data", "id"),
  secretFormat: {
    description:
      "The HTTP webhook signing key (Mailgun, Settings, Webhooks or Security & Users, API Security), not the private API key; on a subaccount's events the primary account's key verifies parent-signature.",
  },

  detect: () => false,

  verify(input) {
    const fields = signedFields(input.body);
    if (fields === undefined) return missingSignature();
    const { timestamp, token, signature } = fields;
    const candidates = [signature, fields["parent-signature"]].flatMap((value) => {
      const digest = value === undefined ? undefined : decodeHex(value);
      return digest?.length === SHA256_BYTES ? [digest] : [];
    });
    if (parseUnixSeconds(timestamp) === undefined || !token || candidates.length === 0) return malformedSignature();
    return matched(anyEqual(candidates, hmac("sha256", input.secret, `${timestamp}${token}`)));
  },

  /** `event-data.event` (`delivered`, `opened`) of a JSON webhook, else a legacy form's `event`. */
  eventType(_headers, body) {
    const json = jsonFields(body, EVENT_SPEC);
    if (json !== undefined) return firstString(objectField(json, "event-data"), "event");
    return firstString({ event: formField(body, "event") }, "event");
  },

  sign: () => [],

  signedHeaderNames: () => [],
};
