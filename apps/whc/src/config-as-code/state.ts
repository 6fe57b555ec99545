import { isDeepStrictEqual } from "node:util";
import {
  breakerSettingsOf,
  defaultDestinationName,
  DESTINATION_DEFAULTS,
  type ConfigInbound,
  type InboundViewJson,
  type RedactSettings,
  type DedupeSettings,
  type BreakerSettings,
  type ConfigEndpoint,
  type DestinationFilter,
  type DestinationSettings,
  type DestinationViewJson,
  type EndpointJson,
  type RateLimitSettings,
  type EndpointResponseConfig,
  type OPERATING_MODES,
  type ENDPOINT_STATUSES,
} from "@whc/api-model";

/**
 * A destination as `whc apply` compares it (design §17): its settings and routing, no id (the
 * file matches destinations by name), no secret. `name` undefined: a file's `forward`, which
 * leaves the name to the endpoint.
 */
export interface ManagedDestination extends DestinationSettings {
  name: string | undefined;
  filter?: DestinationFilter;
  transform?: string;
  rateLimit?: RateLimitSettings;
  breaker?: BreakerSettings;
  paused: boolean;
}

/**
 * An endpoint's settings that `whc apply` manages, in one form whether read from the file or
 * from /v1, so that the two compare field by field. Secrets are not among them: whc cannot read
 * one back (plan.ts sets them only where none is set).
 */
export interface Managed {
  displayName: string;
  operatingMode: (typeof OPERATING_MODES)[number];
  status: (typeof ENDPOINT_STATUSES)[number];
  replayFromDashboard: boolean;
  replayFromApi: boolean;
  provider: string;
  /** undefined in the file: left as it is (/v1 cannot remove it). */
  genericSignatureHeader: string | undefined;
  genericSignaturePrefix: string;
  response: EndpointResponseConfig | null;
  /** Named `forward` in a plan when the file gives its one destination as `forward`. */
  destinations: ManagedDestination[] | null;
  redact: RedactSettings | null;
  dedupe: DedupeSettings | null;
  /** Its parts but the password and token value, which whc cannot read back. */
  inbound: InboundParts | null;
}

/** Inbound protection without its secrets: what the file and /v1 both show. */
export interface InboundParts {
  basicAuth?: { username: string };
  headerToken?: { name: string };
  allowIps?: string[];
  methods?: string[];
}

function inboundParts(i: ConfigInbound | InboundViewJson): InboundParts {
  return defined({
    basicAuth: i.basicAuth && { username: i.basicAuth.username },
    headerToken: i.headerToken && { name: i.headerToken.name },
    allowIps: i.allowIps,
    methods: i.methods,
  });
}

/** In the order a plan names them and export-config writes them. */
export const MANAGED_FIELDS = [
  "displayName",
  "operatingMode",
  "status",
  "replayFromDashboard",
  "replayFromApi",
  "provider",
  "genericSignatureHeader",
  "genericSignaturePrefix",
  "response",
  "destinations",
  "redact",
  "dedupe",
  "inbound",
] as const satisfies readonly (keyof Managed)[];
export type ManagedField = (typeof MANAGED_FIELDS)[number];

/** What a field left out of the file means: the value an endpoint created without it has. */
export function absentValues(slug: string): Omit<Managed, "genericSignatureHeader"> {
  return {
    displayName: slug,
    operatingMode: "capture",
    status: "active",
    replayFromDashboard: true,
    replayFromApi: true,
    provider: "generic",
    genericSignaturePrefix: "",
    response: null,
    destinations: null,
    redact: null,
    dedupe: null,
    inbound: null,
  };
}

/** Without keys whose value is undefined: a field left out and one set to nothing compare equal. */
function defined<T extends object>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The endpoint the file describes. */
export function fromFile(e: ConfigEndpoint): Managed {
  const absent = absentValues(e.slug);
  const destinations: ManagedDestination[] | null = e.forward
    ? [{ name: undefined, url: e.forward.url, keepPath: e.forward.keepPath, timeoutMs: e.forward.timeoutMs, maxAttempts: e.forward.maxAttempts, paused: false }]
    : e.destinations
      ? e.destinations.map(({ targetSecretFromEnv: _named, ...d }) => defined({ ...d, breaker: breakerSettingsOf(d.breaker), paused: d.paused ?? false }))
      : null;
  return {
    displayName: e.displayName ?? absent.displayName,
    operatingMode: e.operatingMode ?? absent.operatingMode,
    status: e.status ?? absent.status,
    replayFromDashboard: e.replayFromDashboard ?? absent.replayFromDashboard,
    replayFromApi: e.replayFromApi ?? absent.replayFromApi,
    provider: e.provider ?? absent.provider,
    genericSignatureHeader: e.genericSignatureHeader,
    genericSignaturePrefix: e.genericSignaturePrefix ?? absent.genericSignaturePrefix,
    response: e.response ? defined(e.response) : null,
    destinations,
    redact: e.redact ? defined(e.redact) : null,
    dedupe: e.dedupe ? defined(e.dedupe) : null,
    inbound: e.inbound ? inboundParts(e.inbound) : null,
  };
}

/** A destination as /v1 shows it, compared as the file gives one. */
function managedDestination(d: DestinationViewJson): ManagedDestination {
  return defined({
    name: d.name,
    url: d.url,
    keepPath: d.keepPath,
    timeoutMs: d.timeoutMs,
    maxAttempts: d.maxAttempts,
    filter: d.filter,
    transform: d.transform,
    rateLimit: d.rateLimit,
    // Its settings only (the view adds the breaker's state), and none when they are the defaults.
    breaker: breakerSettingsOf(d.breaker),
    paused: d.paused,
  });
}

/** The endpoint as /v1 shows it. */
export function fromEndpoint(e: EndpointJson): Managed {
  return {
    displayName: e.displayName,
    operatingMode: e.operatingMode,
    status: e.status,
    replayFromDashboard: e.replayFromDashboard,
    replayFromApi: e.replayFromApi,
    provider: e.provider,
    genericSignatureHeader: e.genericSignatureHeader,
    genericSignaturePrefix: e.genericSignaturePrefix ?? "",
    response: e.response ? defined(e.response) : null,
    destinations: e.destinations && e.destinations.length > 0 ? e.destinations.map(managedDestination) : null,
    redact: e.redact ? defined(e.redact) : null,
    dedupe: e.dedupe ? defined(e.dedupe) : null,
    inbound: e.inbound ? inboundParts(e.inbound) : null,
  };
}

/** The desired destinations with a name the file leaves to the endpoint (a `forward`) taken from the current one in its place. */
export function namedAsCurrent(desired: ManagedDestination[] | null, current: ManagedDestination[] | null): ManagedDestination[] | null {
  return desired && desired.map((d, i) => (d.name === undefined ? { ...d, name: current?.[i]?.name ?? defaultDestinationName(i) } : d));
}

/** The managed fields in which `current` differs from `desired` (a field the file leaves to the endpoint never does). */
export function changedFields(desired: Managed, current: Managed): ManagedField[] {
  const resolved = { ...desired, destinations: namedAsCurrent(desired.destinations, current.destinations) };
  return MANAGED_FIELDS.filter((f) => resolved[f] !== undefined && !isDeepStrictEqual(resolved[f], current[f]));
}

/** A destination's settings as the file writes them: the defaults left out. */
export function forwardEntry(settings: DestinationSettings): Partial<DestinationSettings> & { url: string } {
  return {
    url: settings.url,
    ...(settings.keepPath !== DESTINATION_DEFAULTS.keepPath ? { keepPath: settings.keepPath } : {}),
    ...(settings.timeoutMs !== DESTINATION_DEFAULTS.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.maxAttempts !== DESTINATION_DEFAULTS.maxAttempts ? { maxAttempts: settings.maxAttempts } : {}),
  };
}

/**
 * Whether the file can give these destinations as part two's `forward`: one, under its
 * default name, with no routing (export-config writes `destinations` otherwise).
 */
export function isPlainForward(destinations: readonly ManagedDestination[]): boolean {
  const [only] = destinations;
  return (
    destinations.length === 1 &&
    only!.name === defaultDestinationName(0) &&
    only!.filter === undefined &&
    only!.transform === undefined &&
    only!.rateLimit === undefined &&
    only!.breaker === undefined &&
    !only!.paused
  );
}

/** A destination as the file writes it under `destinations`: its name and settings, the defaults left out. */
export function destinationEntry(d: ManagedDestination): Record<string, unknown> {
  return defined({
    name: d.name,
    ...forwardEntry(d),
    filter: d.filter,
    transform: d.transform,
    rateLimit: d.rateLimit,
    breaker: d.breaker,
    ...(d.paused ? { paused: true } : {}),
  });
}
