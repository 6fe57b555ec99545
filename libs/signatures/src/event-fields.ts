import { formField } from "./body.js";
import { jsonFields, type FieldSpec, type Fields } from "./json-fields.js";

/** Reading the fields providers name their events with; every step answers undefined rather than throwing. */

/** An empty name is no name: a sender that sends "" has not told us the type. */
export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The first of these fields holding a non-empty string. */
export function firstString(fields: Fields | undefined, ...names: readonly string[]): string | undefined {
  if (fields === undefined) return undefined;
  for (const name of names) {
    const value = nonEmptyString(fields[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The `payload` field of a form body, read for the fields of the JSON it holds. */
export function formPayload(body: Uint8Array, spec: FieldSpec): Fields | undefined {
  const payload = formField(body, "payload");
  return payload === undefined ? undefined : jsonFields(Buffer.from(payload), spec);
}

/** Senders differ in the parameters they add (`; charset=utf-8`), never in this prefix. */
export function isForm(contentType: string | undefined): boolean {
  return contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded") ?? false;
}
