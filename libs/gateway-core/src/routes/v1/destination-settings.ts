import type { Client } from "@connectrpc/connect";
import type { CatalogService, CryptoService, Endpoint, ReplayService } from "@whc/contracts";
import { defaultDestinationName, type DestinationInputValue, type ForwardSettings, type StoredDestination, type Warning } from "@whc/api-model";
import { destinationsOf } from "@whc/api-model/present";
import { newId } from "@whc/ids";
import { compileFilter, FilterRefused } from "@whc/routing";
import { validationFailed, type FieldReason } from "@whc/errors";
import { checkTransformSource } from "@whc/transform-sandbox";
import { vetForwardTarget } from "./forward-settings.js";

/**
 * An endpoint's destinations on their way to the catalog (design §17, ADR 0080): `forward`
 * (part two's one destination, now shorthand for the first) or `destinations`, each URL
 * vetted as a replay target, each filter compiled as ingest will run it, names made unique,
 * ids kept or assigned; the target secrets sealed together as one JSON object (the catalog
 * keeps them apart from the settings, which every endpoint read shows).
 */

type Deps = { catalog: Client<typeof CatalogService>; crypto: Client<typeof CryptoService>; replay: Client<typeof ReplayService> };

/** What the catalog's patch (or a new endpoint) gets for the destinations. */
export interface DestinationFields {
  forwardJson: string;
  sealedDestinationSecrets: Uint8Array;
  /** The target secret of an endpoint saved before destinations has moved into the sealed object. */
  clearTargetSecret: boolean;
}

const NONE: DestinationFields = { forwardJson: "", sealedDestinationSecrets: new Uint8Array(), clearTargetSecret: true };

/** One destination as asked for, with where it came from (for the error's field) and the secret it gets. */
interface Wanted {
  field: string;
  input: DestinationInputValue;
  /** The stored destination it replaces, when it keeps one's id. */
  stored: StoredDestination | undefined;
}

/** The endpoint's secrets by destination id, opened (an endpoint saved before destinations: its one, under its id). */
async function storedSecrets(crypto: Deps["crypto"], endpoint: Endpoint): Promise<Record<string, string>> {
  if (endpoint.sealedDestinationSecrets.length > 0) {
    const { plaintext } = await crypto.openSecret({ sealed: endpoint.sealedDestinationSecrets });
    return JSON.parse(Buffer.from(plaintext).toString("utf8")) as Record<string, string>;
  }
  if (endpoint.sealedTargetSecret.length > 0) {
    const { plaintext } = await crypto.openSecret({ sealed: endpoint.sealedTargetSecret });
    return { [endpoint.id]: Buffer.from(plaintext).toString("utf8") };
  }
  return {};
}

function refuse(field: string, reason: FieldReason, message: string): never {
  throw validationFailed(field, reason, message);
}

/** A filter as ingest compiles it: one mingo would not run is refused here, naming where. */
export function checkFilter(field: string, filter: DestinationInputValue["filter"]): void {
  if (!filter) return;
  try {
    compileFilter(filter);
  } catch (err) {
    if (err instanceof FilterRefused) refuse(err.field ? `${field}.filter.${err.field}` : `${field}.filter`, err.reason as FieldReason, err.message);
    throw err;
  }
}

/** A transform that could not run at all (too large, no parse, no `transform`) is refused when saved. */
function checkTransform(field: string, transform: DestinationInputValue["transform"]): void {
  if (!transform) return;
  const checked = checkTransformSource(transform);
  if (!checked.ok) refuse(`${field}.transform`, checked.reason, checked.message);
}

/** The stored form of one destination (its id assigned when new, its name when absent). */
function storedOf(w: Wanted, index: number, secretSet: boolean): StoredDestination {
  const { input } = w;
  const keep = <K extends "filter" | "transform" | "rateLimit" | "breaker">(key: K) => (input[key] === null ? undefined : input[key]);
  return {
    id: w.stored?.id ?? newId(),
    name: input.name ?? w.stored?.name ?? defaultDestinationName(index),
    url: input.url,
    keepPath: input.keepPath,
    timeoutMs: input.timeoutMs,
    maxAttempts: input.maxAttempts,
    targetSecretSet: secretSet,
    ...(keep("filter") ? { filter: keep("filter")! } : {}),
    ...(keep("transform") ? { transform: keep("transform")! } : {}),
    ...(keep("rateLimit") ? { rateLimit: keep("rateLimit")! } : {}),
    ...(keep("breaker") ? { breaker: keep("breaker")! } : {}),
    paused: input.paused ?? false,
  };
}

/**
 * The destinations a PATCH's `forward` leaves (design §9, §17): the first destination's url,
 * keepPath, timeoutMs and maxAttempts replaced; its name, routing fields and secret kept when
 * left out (null removes a filter or transform); the other destinations as they are.
 */
function forwardOverFirst(forward: ForwardSettings, stored: readonly StoredDestination[]): Wanted[] {
  const [first, ...rest] = stored;
  const routing = {
    name: forward.name ?? first?.name,
    filter: forward.filter === undefined ? first?.filter : forward.filter,
    transform: forward.transform === undefined ? first?.transform : forward.transform,
    rateLimit: forward.rateLimit === undefined ? first?.rateLimit : forward.rateLimit,
    breaker: forward.breaker === undefined ? first?.breaker : forward.breaker,
    paused: forward.paused ?? first?.paused,
  };
  const merged = { ...forward, ...routing } as DestinationInputValue;
  return [
    { field: "forward", input: merged, stored: first },
    ...rest.map((d, i): Wanted => ({ field: `destinations.${i + 1}`, input: { ...d, targetSecret: undefined } as DestinationInputValue, stored: d })),
  ];
}

/** `destinations` as given: each with an `id` keeps that stored destination's id and, unless given, its secret. */
function destinationsAsGiven(given: readonly DestinationInputValue[], stored: readonly StoredDestination[]): Wanted[] {
  const byId = new Map(stored.map((d) => [d.id, d]));
  return given.map((input, i) => {
    const field = `destinations.${i}`;
    const id = input.id?.toLowerCase();
    const kept = id === undefined ? undefined : byId.get(id);
    if (id !== undefined && !kept) refuse(`${field}.id`, "unknown", "not a destination of this endpoint: leave id out for a new one");
    return { field, input, stored: kept };
  });
}

/** A proxy endpoint has one destination, its `forward`, without a filter (design §17). */
function checkProxy(wanted: readonly Wanted[], destinationsField: string): void {
  if (wanted.length > 1) refuse(destinationsField, "unsupported", "a proxy endpoint has exactly one destination");
  const [only] = wanted;
  if (only?.input.filter) refuse(`${only.field}.filter`, "unsupported", "a proxy endpoint forwards every capture: it takes no filter");
}

/**
 * Builds the stored destinations and their sealed secrets: names unique, filters compiled,
 * URLs vetted (warnings for names that do not resolve now), secrets given set, null removed,
 * left out kept (for a destination that keeps its id).
 */
async function built(deps: Deps, wanted: readonly Wanted[], endpoint: Endpoint | undefined, ingestPublicUrl: string, warnings: Warning[]): Promise<DestinationFields> {
  const names = new Set<string>();
  const needsStored = endpoint !== undefined && wanted.some((w) => w.stored?.targetSecretSet && w.input.targetSecret === undefined);
  const kept = needsStored ? await storedSecrets(deps.crypto, endpoint) : {};
  const secrets: Record<string, string> = {};
  const destinations: StoredDestination[] = [];
  for (const [i, w] of wanted.entries()) {
    checkFilter(w.field, w.input.filter);
    checkTransform(w.field, w.input.transform);
    warnings.push(...(await vetForwardTarget(deps.replay, w.input.url, ingestPublicUrl, `${w.field}.url`)));
    const given = w.input.targetSecret;
    const secret = given === null ? undefined : (given ?? (w.stored ? kept[w.stored.id] : undefined));
    const d = storedOf(w, i, secret !== undefined);
    if (names.has(d.name)) refuse(`${w.field}.name`, "duplicate", `another destination of this endpoint is named ${d.name}`);
    names.add(d.name);
    if (secret !== undefined) secrets[d.id] = secret;
    destinations.push(d);
  }
  const sealed =
    Object.keys(secrets).length > 0 ? (await deps.crypto.sealSecret({ plaintext: Buffer.from(JSON.stringify(secrets), "utf8") })).sealed : new Uint8Array();
  return { forwardJson: JSON.stringify(destinations), sealedDestinationSecrets: sealed, clearTargetSecret: true };
}

/** What `forward` and `destinations` of a request ask for: one or the other. */
export interface DestinationsAsked {
  forward?: ForwardSettings | null | undefined;
  destinations?: DestinationInputValue[] | null | undefined;
}

function requireOneOf(asked: DestinationsAsked): void {
  if (asked.forward !== undefined && asked.destinations !== undefined) {
    refuse("destinations", "unsupported", "give forward or destinations, not both: forward is shorthand for the first destination");
  }
}

/** A new endpoint's destinations (design §17): none, `forward` as the one, or `destinations`. */
export async function destinationsOfNewEndpoint(deps: Deps, asked: DestinationsAsked, operatingMode: string, ingestPublicUrl: string, warnings: Warning[]): Promise<DestinationFields> {
  requireOneOf(asked);
  const wanted = asked.forward ? forwardOverFirst(asked.forward, []) : asked.destinations ? destinationsAsGiven(asked.destinations, []) : [];
  if (operatingMode === "proxy") checkProxy(wanted, "destinations");
  return wanted.length === 0 ? NONE : built(deps, wanted, undefined, ingestPublicUrl, warnings);
}

/**
 * The patch fields for `forward` or `destinations` as PATCH takes them (design §9, §17): null
 * removes every destination; a proxy endpoint (the mode given, else the stored one) keeps one
 * destination without a filter, checked against what is stored when the patch sets only the
 * mode. Undefined: the patch touches no destination.
 */
export async function destinationsPatch(
  deps: Deps,
  ref: { accountId: string; endpointId: string },
  asked: DestinationsAsked,
  operatingMode: string | undefined,
  ingestPublicUrl: string,
  warnings: Warning[],
): Promise<Partial<DestinationFields>> {
  requireOneOf(asked);
  const touched = asked.forward !== undefined || asked.destinations !== undefined;
  if (!touched && operatingMode !== "proxy") return {};
  if (asked.forward === null || asked.destinations === null) return { forwardJson: "" };
  const { endpoint } = await deps.catalog.getEndpoint({ ...ref, includeSealedSecret: true });
  const stored = endpoint ? destinationsOf(endpoint) : [];
  const mode = operatingMode ?? endpoint?.operatingMode ?? "capture";
  if (!touched) {
    // Only the mode changes to proxy: the stored destinations must fit a proxy endpoint.
    checkProxy(stored.map((d, i): Wanted => ({ field: `destinations.${i}`, input: d as unknown as DestinationInputValue, stored: d })), "operatingMode");
    return {};
  }
  const wanted = asked.forward ? forwardOverFirst(asked.forward, stored) : destinationsAsGiven(asked.destinations!, stored);
  if (mode === "proxy") checkProxy(wanted, "destinations");
  return built(deps, wanted, endpoint, ingestPublicUrl, warnings);
}
