import type { ConfigEndpoint, ConfigFile, ConfigInbound, CreateEndpointRequest, DestinationInput, EndpointJson, InboundSettings, UpdateEndpointRequest } from "@whc/api-model";
import { changedFields, fromEndpoint, fromFile, namedAsCurrent, type ManagedDestination } from "./state.js";

/** One step of a plan, with the /v1 request that makes it. */
export type Change =
  | { action: "create"; slug: string; body: CreateEndpointRequest }
  | { action: "update"; slug: string; id: string; fields: string[]; body: UpdateEndpointRequest }
  | { action: "delete"; slug: string; id: string };

export interface Plan {
  changes: Change[];
  /** Endpoints of the account the file does not name, left as they are (without --prune). */
  kept: string[];
}

/** The secret a field names, read from the environment before planning (secrets.ts). */
type Secrets = ReadonlyMap<string, string>;

function secretOf(secrets: Secrets, variable: string | undefined): string | undefined {
  return variable === undefined ? undefined : secrets.get(variable);
}

/**
 * Inbound protection as /v1 takes it: the password and token value from their variables, each
 * only where the endpoint has none set yet (`current`), so a second run never rotates one.
 */
function inboundBody(i: ConfigInbound, secrets: Secrets, current?: EndpointJson["inbound"]): InboundSettings {
  const password = current?.basicAuth?.passwordSet ? undefined : secretOf(secrets, i.basicAuth?.passwordFromEnv);
  const value = current?.headerToken?.valueSet ? undefined : secretOf(secrets, i.headerToken?.valueFromEnv);
  return {
    ...(i.basicAuth ? { basicAuth: { username: i.basicAuth.username, ...(password ? { password } : {}) } } : {}),
    ...(i.headerToken ? { headerToken: { name: i.headerToken.name, ...(value ? { value } : {}) } } : {}),
    ...(i.allowIps ? { allowIps: i.allowIps } : {}),
    ...(i.methods ? { methods: i.methods } : {}),
  };
}

/** The create request of an endpoint of the file: the fields it gives, the server's defaults for the rest. */
function createBody(e: ConfigEndpoint, secrets: Secrets): CreateEndpointRequest {
  const { secretFromEnv, forward, destinations, inbound, ...fields } = e;
  const secret = secretOf(secrets, secretFromEnv);
  const forwardBody = forward && (({ targetSecretFromEnv, ...settings }) => ({ ...settings, ...(targetSecretFromEnv ? { targetSecret: secretOf(secrets, targetSecretFromEnv) } : {}) }))(forward);
  const destinationsBody = destinations?.map(({ targetSecretFromEnv, ...d }): DestinationInput => ({
    ...d,
    ...(targetSecretFromEnv ? { targetSecret: secretOf(secrets, targetSecretFromEnv) } : {}),
  }));
  return { ...fields, ...(secret ? { secret } : {}), ...(forwardBody ? { forward: forwardBody } : {}), ...(destinationsBody ? { destinations: destinationsBody } : {}), ...(inbound ? { inbound: inboundBody(inbound, secrets) } : {}) };
}

/** The variable naming each destination's target secret in the file, in the file's order (a `forward`'s as the one). */
function targetSecretVariables(e: ConfigEndpoint): (string | undefined)[] {
  return e.forward ? [e.forward.targetSecretFromEnv] : (e.destinations ?? []).map((d) => d.targetSecretFromEnv);
}

/**
 * The `destinations` an update sends (design §17): the file's, each that names a destination
 * of the endpoint under its id (so its secret is kept and its deliveries stay its own), a
 * target secret only where that destination has none.
 */
function destinationsBody(desired: ManagedDestination[], current: EndpointJson, variables: (string | undefined)[], secrets: Secrets): { body: DestinationInput[]; secretsSet: string[] } {
  const byName = new Map((current.destinations ?? []).map((d) => [d.name, d]));
  const secretsSet: string[] = [];
  const body = desired.map(({ name, ...d }, i): DestinationInput => {
    const stored = byName.get(name!);
    const targetSecret = secretOf(secrets, variables[i]);
    const setNow = targetSecret !== undefined && !stored?.targetSecretSet;
    if (setNow) secretsSet.push(name!);
    return { ...(stored ? { id: stored.id } : {}), name, ...d, ...(setNow ? { targetSecret } : {}) };
  });
  return { body, secretsSet };
}

/**
 * What the update of an existing endpoint sends, or undefined when it matches the file. A
 * secret is sent only where the endpoint has none: whc cannot read one back to compare, and
 * sending it again would rotate it.
 */
function update(e: ConfigEndpoint, current: EndpointJson, secrets: Secrets): Extract<Change, { action: "update" }> | undefined {
  const desired = fromFile(e);
  const managed = fromEndpoint(current);
  const changed = changedFields(desired, managed);
  const body: Record<string, unknown> = Object.fromEntries(changed.filter((f) => f !== "destinations").map((f) => [f, desired[f]]));
  // The plan says `forward` for a file that gives its one destination so, `destinations` otherwise.
  const label = e.destinations !== undefined || (current.destinations?.length ?? 0) > 1 ? "destinations" : "forward";
  const fields: string[] = changed.map((f) => (f === "destinations" ? label : f));
  const secret = secretOf(secrets, e.secretFromEnv);
  if (secret && !current.secretSet) {
    fields.push("secret");
    body.secret = secret;
  }
  // Inbound parts changed, or a password or token named in the file and not set (removed since).
  const unsetSecret =
    (e.inbound?.basicAuth?.passwordFromEnv !== undefined && !current.inbound?.basicAuth?.passwordSet) ||
    (e.inbound?.headerToken?.valueFromEnv !== undefined && !current.inbound?.headerToken?.valueSet);
  if (e.inbound && (fields.includes("inbound") || unsetSecret)) {
    if (!fields.includes("inbound")) fields.push("inbound");
    body.inbound = inboundBody(e.inbound, secrets, current.inbound);
  }
  const wanted = namedAsCurrent(desired.destinations, managed.destinations);
  if (wanted === null) {
    if (changed.includes("destinations")) body.destinations = null;
  } else {
    // Destinations sent without a targetSecret keep the stored one (docs/api.md).
    const sent = destinationsBody(wanted, current, targetSecretVariables(e), secrets);
    fields.push(...sent.secretsSet.map((name) => (label === "forward" ? "forward.targetSecret" : `destinations.${name}.targetSecret`)));
    if (changed.includes("destinations") || sent.secretsSet.length > 0) body.destinations = sent.body;
  }
  return fields.length === 0 ? undefined : { action: "update", slug: e.slug, id: current.id, fields, body: body as UpdateEndpointRequest };
}

/** The changes that make the account's endpoints match the file: creates and updates in the file's order, then deletes. */
export function planChanges(file: ConfigFile, current: EndpointJson[], secrets: Secrets, prune: boolean): Plan {
  const bySlug = new Map(current.map((e) => [e.slug, e]));
  const changes: Change[] = [];
  for (const e of file.endpoints) {
    const existing = bySlug.get(e.slug);
    if (!existing) changes.push({ action: "create", slug: e.slug, body: createBody(e, secrets) });
    else {
      const change = update(e, existing, secrets);
      if (change) changes.push(change);
    }
  }
  const named = new Set(file.endpoints.map((e) => e.slug));
  const others = current.filter((e) => !named.has(e.slug));
  if (prune) for (const e of others) changes.push({ action: "delete", slug: e.slug, id: e.id });
  return { changes, kept: prune ? [] : others.map((e) => e.slug) };
}

/** A plan's line: `+ create endpoint <slug>`, `~ update endpoint <slug>: <fields>`, `- delete endpoint <slug>`. */
export function planLine(change: Change): string {
  if (change.action === "create") return `+ create endpoint ${change.slug}`;
  if (change.action === "delete") return `- delete endpoint ${change.slug}`;
  return `~ update endpoint ${change.slug}: ${change.fields.join(", ")}`;
}
