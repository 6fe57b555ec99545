import { isDeepStrictEqual } from "node:util";
import {
  DESTINATION_DEFAULTS,
  type ConfigInbound,
  type InboundViewJson,
  type RedactSettings,
  type ConfigEndpoint,
  type DestinationSettings,
  type EndpointJson,
  type EndpointResponseConfig,
  type OPERATING_MODES,
  type ENDPOINT_STATUSES,
} from "@whc/api-model";

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
  forward: DestinationSettings | null;
  redact: RedactSettings | null;
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
  "forward",
  "redact",
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
    forward: null,
    redact: null,
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
  const forward = e.forward ? (({ targetSecretFromEnv: _named, ...settings }) => settings)(e.forward) : null;
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
    forward,
    redact: e.redact ? defined(e.redact) : null,
    inbound: e.inbound ? inboundParts(e.inbound) : null,
  };
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
    forward: e.forward ? { url: e.forward.url, keepPath: e.forward.keepPath, timeoutMs: e.forward.timeoutMs, maxAttempts: e.forward.maxAttempts } : null,
    redact: e.redact ? defined(e.redact) : null,
    inbound: e.inbound ? inboundParts(e.inbound) : null,
  };
}

/** The managed fields in which `current` differs from `desired` (a field the file leaves to the endpoint never does). */
export function changedFields(desired: Managed, current: Managed): ManagedField[] {
  return MANAGED_FIELDS.filter((f) => desired[f] !== undefined && !isDeepStrictEqual(desired[f], current[f]));
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
