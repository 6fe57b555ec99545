import { type Command, Option } from "commander";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import type { Context } from "../context.js";
import { openCatalog } from "../keys.js";
import { table } from "../output.js";

interface CatalogOptions {
  catalogUrl?: string;
  dataDir: string;
}

function withCatalogOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--catalog-url <url>", "the catalog service (distributed mode)").env("WHC_CATALOG_URL"))
    .addOption(new Option("--data-dir <dir>", "the embedded store (all-in-one)").env("WHC_DATA_DIR").default("./data"));
}

/** Runs `work` against the catalog and closes it, however `work` ends. */
async function withCatalog<T>(opts: CatalogOptions, work: (catalog: Awaited<ReturnType<typeof openCatalog>>["catalog"]) => Promise<T>): Promise<T> {
  const { catalog, close } = await openCatalog(opts);
  try {
    return await work(catalog);
  } finally {
    await close();
  }
}

/** `whc keys create|list|revoke`: API keys live in the catalog, not behind /v1. */
export function keyCommands(program: Command, ctx: () => Context): void {
  const keys = program.command("keys").description("API keys (talks to the catalog, not to /v1)");

  withCatalogOptions(keys.command("create").description("create a key; it is printed once"))
    .requiredOption("--account <name>", "the account (created if new)")
    .action(async (opts: CatalogOptions & { account: string }) => {
      const { out } = ctx();
      await withCatalog(opts, async (catalog) => {
        const key = generateApiKey();
        const res = await out.busy("creating key", () =>
          catalog.ensureApiKey({ accountName: opts.account, keyHash: hashApiKey(key), prefix: keyPrefix(key) }),
        );
        out.result({ id: res.key!.id, account: opts.account, key }, () => `${key}\n(key ${res.key!.id} of account ${opts.account}; shown this once)`);
      });
    });

  withCatalogOptions(keys.command("list").description("list keys (prefixes only)"))
    .option("--account <name>", "only this account")
    .action(async (opts: CatalogOptions & { account?: string }) => {
      const { out } = ctx();
      await withCatalog(opts, async (catalog) => {
        const res = await catalog.listApiKeys({ accountName: opts.account ?? "" });
        const rows = res.keys.map((k) => ({
          id: k.id,
          account: k.accountName,
          prefix: k.prefix,
          createdAt: new Date(Number(k.createdAtMs)).toISOString(),
          ...(k.revokedAtMs !== undefined ? { revokedAt: new Date(Number(k.revokedAtMs)).toISOString() } : {}),
        }));
        out.result(rows, () =>
          table([["ID", "ACCOUNT", "PREFIX", "CREATED", "REVOKED"], ...rows.map((r) => [r.id, r.account, `${r.prefix}…`, r.createdAt, r.revokedAt ?? ""])]),
        );
      });
    });

  withCatalogOptions(keys.command("revoke").description("revoke a key by id").argument("<id>"))
    .action(async (id: string, opts: CatalogOptions) => {
      const { out } = ctx();
      await withCatalog(opts, async (catalog) => {
        const res = await catalog.revokeApiKey({ keyId: id });
        out.result({ id: res.key!.id, revoked: true }, () => `revoked ${res.key!.id}`);
      });
    });
}
