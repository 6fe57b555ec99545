import type { ConfigEndpoint, ConfigFile, ConfigInbound, CreateEndpointRequest, EndpointJson, InboundSettings, UpdateEndpointRequest } from "@whc/api-model";
import { changedFields, fromEndpoint, fromFile } from "./state.js";

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
  const { secretFromEnv, forward, inbound, ...fields } = e;
  const secret = secretOf(secrets, secretFromEnv);
  const forwardBody = forward && (({ targetSecretFromEnv, ...settings }) => ({ ...settings, ...(targetSecretFromEnv ? { targetSecret: secretOf(secrets, targetSecretFromEnv) } : {}) }))(forward);
  return { ...fields, ...(secret ? { secret } : {}), ...(forwardBody ? { forward: forwardBody } : {}), ...(inbound ? { inbound: inboundBody(inbound, secrets) } : {}) };
}

/**
 * What the update of an existing endpoint sends, or undefined when it matches the file. A
 * secret is sent only where the endpoint has none: whc cannot read one back to compare, and
 * sending it again would rotate it.
 */
function update(e: ConfigEndpoint, current: EndpointJson, secrets: Secrets): Extract<Change, { action: "update" }> | undefined {
  const desired = fromFile(e);
  const fields: string[] = changedFields(desired, fromEndpoint(current));
  const body: Record<string, unknown> = Object.fromEntries(fields.map((f) => [f, desired[f as keyof typeof desired]]));
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
  const targetSecret = secretOf(secrets, e.forward?.targetSecretFromEnv);
  // Forward settings sent without a targetSecret keep the stored one (docs/api.md).
  if (targetSecret && desired.forward && !current.forward?.targetSecretSet) {
    fields.push("forward.targetSecret");
    body.forward = { ...desired.forward, targetSecret };
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
