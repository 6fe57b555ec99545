import { type Command, InvalidArgumentError, Option } from "commander";
import { SCOPES, type ApiKeyJson, type CreateApiKeyRequest } from "@whc/api-model";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { CliError } from "../exit-codes.js";
import { openCatalog } from "../keys.js";
import { oneOf, table } from "../output.js";

interface CatalogOptions {
  catalogUrl?: string;
  dataDir: string;
}

interface CreateOptions extends CatalogOptions {
  account?: string;
  name?: string;
  scope?: string[];
  endpoint?: string[];
  expires?: string;
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** When the key stops working: an ISO 8601 time, or a duration from now (`12h`, `30d`). */
export function expiryArgument(value: string, now = Date.now()): string {
  const after = /^(\d{1,6})([mhd])$/.exec(value);
  if (after) return new Date(now + Number(after[1]) * UNIT_MS[after[2]!]!).toISOString();
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) throw new InvalidArgumentError("an ISO 8601 time, or a duration from now (12h, 30d)");
  return new Date(ms).toISOString();
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function withCatalogOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--catalog-url <url>", "with --account: the catalog service (distributed mode)").env("WHC_CATALOG_URL"))
    .addOption(new Option("--data-dir <dir>", "with --account: the embedded store (all-in-one)").env("WHC_DATA_DIR").default("./data"));
}

function keyRow(k: ApiKeyJson): string[] {
  const state = k.revokedAt ? "revoked" : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? "expired" : "active";
  return [k.id, k.name, `${k.prefix}…`, k.scopes.join(","), k.endpointIds.length ? String(k.endpointIds.length) : "all", k.lastUsedAt ?? "never", k.expiresAt ?? "never", state];
}

/**
 * An account's first key, made in the catalog itself (design §2): only for an account without
 * an active key, every other key is made over /v1 (design §15).
 */
async function createFirstKey(ctx: Context, opts: CreateOptions & { account: string }): Promise<void> {
  const { out } = ctx;
  const { catalog, close } = await openCatalog(opts);
  try {
    const { keys } = await catalog.listApiKeys({ accountName: opts.account });
    const now = BigInt(Date.now());
    if (keys.some((k) => k.revokedAtMs === undefined && (k.expiresAtMs === undefined || k.expiresAtMs > now))) {
      throw new CliError(
        `account ${opts.account} already has a key: make more over the API with it (whc keys create --name NAME --scope SCOPE, WHC_API_KEY set)`,
      );
    }
    const key = generateApiKey();
    const res = await out.busy("creating key", () =>
      catalog.ensureApiKey({ accountName: opts.account, keyHash: hashApiKey(key), prefix: keyPrefix(key), name: opts.name ?? "first key" }),
    );
    out.result({ id: res.key!.id, account: opts.account, key, scopes: res.key!.scopes }, () => `${key}\n(key ${res.key!.id} of account ${opts.account}, every scope; shown this once)`);
  } finally {
    await close();
  }
}

/** A key made over /v1 by the key in WHC_API_KEY, within its reach. */
async function createKey(ctx: Context, opts: CreateOptions): Promise<void> {
  const { out } = ctx;
  if (!opts.name) throw new CliError("give the key a --name (or --account NAME for an account's first key)");
  if (!opts.scope?.length) throw new CliError(`give at least one --scope: ${oneOf(SCOPES)}`);
  const api = ctx.api();
  const endpointIds = await Promise.all((opts.endpoint ?? []).map(async (ref) => (await resolveEndpoint(api, ref)).id));
  const body: CreateApiKeyRequest = {
    name: opts.name,
    scopes: opts.scope as CreateApiKeyRequest["scopes"],
    ...(endpointIds.length ? { endpointIds } : {}),
    ...(opts.expires ? { expiresAt: opts.expires } : {}),
  };
  const created = await out.busy("creating key", () => api.keys.create(body));
  out.result(created, () => `${created.key}\n(key ${created.id}, ${created.scopes.join(", ")}${endpointIds.length ? `, on ${endpointIds.length} endpoint(s)` : ""}; shown this once)`);
}

/** `whc keys create|list|revoke`: over /v1, but an account's first key, made in the catalog. */
export function keyCommands(program: Command, ctx: () => Context): void {
  const keys = program.command("keys").description("API keys: scopes, endpoints, expiry, last use (over /v1; an account's first key in the catalog)");

  withCatalogOptions(keys.command("create").description("create a key; it is printed once"))
    .option("--account <name>", "an account's first key (every scope), made in the catalog itself; the account is created if new")
    .option("--name <name>", "what the key is for (over /v1)")
    .addOption(new Option("--scope <scope>", `what the key may do, repeatable: ${oneOf(SCOPES)}`).choices(SCOPES).argParser(collect))
    .addOption(new Option("--endpoint <endpoint>", "only this endpoint (id or slug), repeatable").argParser(collect))
    .addOption(new Option("--expires <time>", "when it stops working: ISO 8601, or 12h, 30d from now").argParser((v) => expiryArgument(v)))
    .action(async (opts: CreateOptions) => {
      if (opts.account !== undefined) {
        if (opts.scope || opts.endpoint || opts.expires) throw new CliError("--account makes an account's first key, with every scope: --scope, --endpoint and --expires go over /v1");
        return createFirstKey(ctx(), opts as CreateOptions & { account: string });
      }
      return createKey(ctx(), opts);
    });

  keys
    .command("list")
    .description("the keys within your key's reach (prefixes only), oldest first")
    .action(async () => {
      const { out, api } = ctx();
      const list = await out.busy("listing keys", () => api().keys.list());
      const { items } = list;
      out.result(list, () => table([["ID", "NAME", "PREFIX", "SCOPES", "ENDPOINTS", "LAST USED", "EXPIRES", "STATE"], ...items.map(keyRow)]));
    });

  keys
    .command("revoke")
    .description("revoke a key by id: refused from now on")
    .argument("<id>")
    .action(async (id: string) => {
      const { out, api } = ctx();
      await out.busy("revoking key", () => api().keys.revoke(id));
      out.result({ id, revoked: true }, () => `revoked ${id}`);
    });
}
