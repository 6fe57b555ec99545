import { dedupeSettingsOf, parseDedupeField } from "@whc/api-model";
import { header, jsonScalarReader, providerDeliveryId, PROVIDER_NAMES, type HeaderPair, type Provider } from "@whc/signatures";

/**
 * Deduplication on the capture path (design §17, ADR 0083): an endpoint's `dedupe` settings
 * read once per endpoint lookup into a Deduper, which finds a capture's key material: the
 * provider's own delivery or event id (`key: "auto"`, where each provider file says it is), or
 * the values of the named fields. Ingest sends the key's keyed hash with the capture (never the
 * key), and the catalog decides in the append whether it is a duplicate. An endpoint without
 * `dedupe` has no Deduper, and its captures do none of this work.
 */

/** What a key is read from: the request as it arrived (before redaction). */
export interface DedupeInput {
  /** The capture's provider (configured, or detected from its headers). */
  provider: string;
  headers: readonly HeaderPair[];
  body: Uint8Array;
  /** What followed the webhook URL: sub-path and query. */
  rest: string;
}

export interface Deduper {
  /** How long a first capture's key makes duplicates. */
  windowMs: bigint;
  /** The capture's key material; undefined when it has no key (no provider id; none of the fields). */
  materialOf(input: DedupeInput): string | undefined;
}

const isProvider = (name: string): name is Provider => (PROVIDER_NAMES as readonly string[]).includes(name);

/** `key: "auto"`: the provider and its id. A provider that sends none (or an unknown one) gives no key. */
function autoMaterial(input: DedupeInput): string | undefined {
  if (!isProvider(input.provider)) return undefined;
  const id = providerDeliveryId(input.provider, input.headers, input.body);
  return id === undefined ? undefined : JSON.stringify(["auto", input.provider, id]);
}

/** The first value of a query parameter of `rest`, as URLSearchParams decodes it. */
function queryValue(rest: string, name: string): string | undefined {
  const at = rest.indexOf("?");
  if (at < 0) return undefined;
  return new URLSearchParams(rest.slice(at + 1)).get(name) ?? undefined;
}

type FieldReader = (input: DedupeInput) => string | undefined;

function fieldReader(field: string): FieldReader {
  const source = parseDedupeField(field);
  if (!source) return () => undefined;
  if ("header" in source) return (input) => header(input.headers, source.header);
  if ("query" in source) return (input) => queryValue(input.rest, source.query);
  const read = jsonScalarReader(source.body);
  return (input) => read(input.body);
}

/** `fields`: their values in order, an absent one as null; a capture with none of them gives no key. */
function fieldsMaterial(readers: readonly FieldReader[]): (input: DedupeInput) => string | undefined {
  return (input) => {
    const values = readers.map((read) => read(input) ?? null);
    return values.every((v) => v === null) ? undefined : JSON.stringify(["fields", ...values]);
  };
}

/** The endpoint's Deduper, from its stored settings (validated when saved); undefined: it does not deduplicate. */
export function deduperOf(dedupeJson: string): Deduper | undefined {
  const settings = dedupeSettingsOf(dedupeJson);
  if (!settings) return undefined;
  const windowMs = BigInt(settings.windowSeconds) * 1000n;
  if (settings.fields) return { windowMs, materialOf: fieldsMaterial(settings.fields.map(fieldReader)) };
  return { windowMs, materialOf: autoMaterial };
}
