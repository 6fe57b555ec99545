import type { Client } from "@connectrpc/connect";
import type { CatalogService, CryptoService } from "@whc/contracts";
import { inboundViewOf, type InboundSecrets, type InboundSettings } from "@whc/api-model";
import { validationFailed } from "@whc/errors";

/**
 * An endpoint's `inbound` protection on its way to the catalog (design §16): the settings
 * without their secrets as JSON, and the whole of them, secrets included, sealed by the crypto
 * service as the endpoint's `secret` is. Ingest opens the sealed form to check senders.
 */

type InboundDeps = { catalog: Client<typeof CatalogService>; crypto: Client<typeof CryptoService> };

async function sealed(crypto: Client<typeof CryptoService>, settings: InboundSecrets): Promise<{ inboundJson: string; sealedInbound: Uint8Array }> {
  const { sealed } = await crypto.sealSecret({ plaintext: Buffer.from(JSON.stringify(settings), "utf8") });
  return { inboundJson: JSON.stringify(inboundViewOf(settings)), sealedInbound: sealed };
}

/**
 * The settings with their secrets: those given, else those `stored` holds (a PATCH that leaves
 * a password or token value out keeps the one set); none at all is `required`.
 */
function withSecrets(given: InboundSettings, stored: InboundSecrets | undefined): InboundSecrets {
  const password = given.basicAuth && (given.basicAuth.password ?? stored?.basicAuth?.password);
  if (given.basicAuth && !password) throw validationFailed("inbound.basicAuth.password", "required");
  const value = given.headerToken && (given.headerToken.value ?? stored?.headerToken?.value);
  if (given.headerToken && !value) throw validationFailed("inbound.headerToken.value", "required");
  return {
    ...(given.basicAuth ? { basicAuth: { username: given.basicAuth.username, password: password as string } } : {}),
    ...(given.headerToken ? { headerToken: { name: given.headerToken.name, value: value as string } } : {}),
    ...(given.allowIps ? { allowIps: given.allowIps } : {}),
    ...(given.methods ? { methods: given.methods } : {}),
  };
}

/** The inbound fields of a new endpoint: none, or the settings with every secret given. */
export async function inboundOfNewEndpoint(crypto: Client<typeof CryptoService>, given: InboundSettings | undefined) {
  if (!given) return { inboundJson: "", sealedInbound: new Uint8Array() };
  return sealed(crypto, withSecrets(given, undefined));
}

/** The stored protection with its secrets, opened (undefined when none is set). */
async function storedInbound(deps: InboundDeps, accountId: string, endpointId: string): Promise<InboundSecrets | undefined> {
  const { endpoint } = await deps.catalog.getEndpoint({ accountId, endpointId, includeSealedSecret: true });
  if (!endpoint?.sealedInbound.length) return undefined;
  const { plaintext } = await deps.crypto.openSecret({ sealed: endpoint.sealedInbound });
  return JSON.parse(Buffer.from(plaintext).toString("utf8")) as InboundSecrets;
}

/** The patch fields for `inbound` as PATCH takes it: replaced (secrets left out kept), or removed with `null`. */
export async function inboundPatch(deps: InboundDeps, accountId: string, endpointId: string, given: InboundSettings | null | undefined) {
  if (given === undefined) return {};
  if (given === null) return { inboundJson: "" };
  const keeps = (given.basicAuth && given.basicAuth.password === undefined) || (given.headerToken && given.headerToken.value === undefined);
  const stored = keeps ? await storedInbound(deps, accountId, endpointId) : undefined;
  return sealed(deps.crypto, withSecrets(given, stored));
}
