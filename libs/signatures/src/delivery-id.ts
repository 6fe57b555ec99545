import { header, type HeaderPair } from "./headers.js";
import { jsonScalarReader } from "./json-fields.js";

/**
 * Where a provider puts its own id of a delivery or of the event it carries: what
 * deduplication's `key: "auto"` reads (design §17, ADR 0083). A retry of a delivery carries the
 * same id, so two captures with one id are one event sent twice. Declared in each provider's
 * file (`deliveryId`); a provider that sends none declares `undefined`, and its captures take
 * no part in `auto` deduplication.
 */
export interface DeliveryIdSource {
  /** Where the id is, in words for the docs ("header X-GitHub-Delivery", "body id"). */
  readonly from: string;
  /** The id in this request; undefined when it is absent or empty. Never throws. */
  read(headers: readonly HeaderPair[], body: Uint8Array): string | undefined;
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value);

/** The first of these headers that is present and not empty. */
export function headerId(...names: readonly string[]): DeliveryIdSource {
  return {
    from: `header ${names.join(" or ")}`,
    read(headers) {
      for (const name of names) {
        const value = nonEmpty(header(headers, name));
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}

/** A string or number at a path of object members of a JSON body (`"event", "id"`: `event.id`). */
export function bodyId(...path: readonly string[]): DeliveryIdSource {
  const read = jsonScalarReader(path);
  return { from: `body ${path.join(".")}`, read: (_headers, body) => nonEmpty(read(body)) };
}

/** The first source that finds an id. */
export function firstId(...sources: readonly DeliveryIdSource[]): DeliveryIdSource {
  return {
    from: sources.map((s) => s.from).join(", else "),
    read(headers, body) {
      for (const s of sources) {
        const value = s.read(headers, body);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}
