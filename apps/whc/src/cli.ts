import { Command, Option } from "commander";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import { ApiError, createApi, type Api } from "./api.js";
import { openCatalog } from "./keys.js";
import { createOutput, table, type Output } from "./output.js";

interface Summary {
  id: string;
  receivedAt: string;
  method: string;
  canonicalEventType?: string;
  verification: string;
  responseCode: number;
  originalSizeBytes: number;
  decryption: string;
}

function eventLine(e: Summary): string {
  return [e.receivedAt, e.method.padEnd(6), String(e.responseCode), e.verification.padEnd(10), e.canonicalEventType ?? "-", `${e.originalSizeBytes} B`, e.id].join("  ");
}

/** The `whc` command line; `env` and the output streams are parameters so tests can run it. */
export function buildCli(env: NodeJS.ProcessEnv): Command {
  const program = new Command("whc")
    .description("Webhook Capture from the command line")
    .addOption(new Option("--json", "machine-readable output"))
    .addOption(new Option("--api-url <url>", "the gateway").env("WHC_API_URL").default("http://localhost:8080"))
    .addOption(new Option("--api-key <key>", "an API key").env("WHC_API_KEY"))
    .showHelpAfterError();

  const ctx = () => {
    const o = program.opts<{ json?: boolean; apiUrl: string; apiKey?: string }>();
    return { out: createOutput(Boolean(o.json)), api: createApi(o.apiUrl, o.apiKey ?? env.WHC_API_KEY) };
  };

  const keys = program.command("keys").description("API keys (talks to the catalog, not to /v1)");
  const catalogOptions = (cmd: Command) =>
    cmd
      .addOption(new Option("--catalog-url <url>", "the catalog service (distributed mode)").env("WHC_CATALOG_URL"))
      .addOption(new Option("--data-dir <dir>", "the embedded store (all-in-one)").env("WHC_DATA_DIR").default("./data"));

  catalogOptions(keys.command("create").description("create a key; it is printed once"))
    .requiredOption("--account <name>", "the account (created if new)")
    .action(async (opts: { account: string; catalogUrl?: string; dataDir: string }) => {
      const { out } = ctx();
      const { catalog, close } = openCatalog(opts);
      try {
        const key = generateApiKey();
        const res = await out.busy("creating key", () =>
          catalog.ensureApiKey({ accountName: opts.account, keyHash: hashApiKey(key), prefix: keyPrefix(key) }),
        );
        out.result({ id: res.key!.id, account: opts.account, key }, () => `${key}\n(key ${res.key!.id} of account ${opts.account}; shown this once)`);
      } finally {
        await close();
      }
    });

  catalogOptions(keys.command("list").description("list keys (prefixes only)"))
    .option("--account <name>", "only this account")
    .action(async (opts: { account?: string; catalogUrl?: string; dataDir: string }) => {
      const { out } = ctx();
      const { catalog, close } = openCatalog(opts);
      try {
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
      } finally {
        await close();
      }
    });

  catalogOptions(keys.command("revoke").description("revoke a key by id").argument("<id>"))
    .action(async (id: string, opts: { catalogUrl?: string; dataDir: string }) => {
      const { out } = ctx();
      const { catalog, close } = openCatalog(opts);
      try {
        const res = await catalog.revokeApiKey({ keyId: id });
        out.result({ id: res.key!.id, revoked: true }, () => `revoked ${res.key!.id}`);
      } finally {
        await close();
      }
    });

  const endpoints = program.command("endpoints").description("receiving endpoints");
  endpoints.command("list").action(async () => {
    const { out, api } = ctx();
    const res = await out.busy("listing", () => api.call<{ items: Record<string, any>[] }>("GET", "/v1/endpoints"));
    out.result(res.items, () =>
      table([["ID", "SLUG", "EVENTS", "STATUS", "WEBHOOK URL"], ...res.items.map((e) => [e.id, e.slug, String(e.eventCount), e.status, e.webhookUrl])]),
    );
  });
  endpoints
    .command("create")
    .option("--slug <slug>")
    .option("--name <displayName>")
    .option("--provider <provider>", "generic, stripe, github, slack, shopify or standard_webhooks")
    .option("--secret <secret>", "the signing secret (write-only)")
    .option("--metadata-only", "never store bodies")
    .action(async (opts: { slug?: string; name?: string; provider?: string; secret?: string; metadataOnly?: boolean }) => {
      const { out, api } = ctx();
      const body = {
        ...(opts.slug ? { slug: opts.slug } : {}),
        ...(opts.name ? { displayName: opts.name } : {}),
        ...(opts.provider ? { provider: opts.provider } : {}),
        ...(opts.secret ? { secret: opts.secret } : {}),
        ...(opts.metadataOnly ? { operatingMode: "metadata_only" } : {}),
      };
      const e = await out.busy("creating", () => api.call<Record<string, any>>("POST", "/v1/endpoints", body));
      out.result(e, () => `created ${e.slug} (${e.id})\nsend webhooks to ${e.webhookUrl}`);
    });
  endpoints
    .command("delete")
    .argument("<id>")
    .action(async (id: string) => {
      const { out, api } = ctx();
      await out.busy("deleting", () => api.call("DELETE", `/v1/endpoints/${id}`));
      out.result({ id, deleted: true }, () => `deleted ${id} and its events`);
    });

  const events = program.command("events").description("captured events");
  events
    .command("tail")
    .description("print the last events, then follow new captures live")
    .argument("<endpointId>")
    .option("-n, --lines <n>", "how many recent events to show first", "10")
    .action(async (endpointId: string, opts: { lines: string }) => tail(ctx(), endpointId, Number(opts.lines)));
  events
    .command("curl")
    .argument("<endpointId>")
    .argument("<eventId>")
    .option("--unmasked", "show secret header values")
    .action(async (endpointId: string, eventId: string, opts: { unmasked?: boolean }) => {
      const { out, api } = ctx();
      const res = await api.call<Record<string, any>>(
        "GET",
        `/v1/endpoints/${endpointId}/events/${eventId}/curl${opts.unmasked ? "?unmasked=true" : ""}`,
      );
      out.result(res, () => res.command);
    });
  events
    .command("replay")
    .argument("<endpointId>")
    .argument("<eventId>")
    .requiredOption("--to <url>", "the target URL")
    .option("--mode <mode>", "exact or resign")
    .option("--secret <secret>", "re-sign with this secret")
    .action(async (endpointId: string, eventId: string, opts: { to: string; mode?: string; secret?: string }) => {
      const { out, api } = ctx();
      const res = await out.busy(`replaying to ${opts.to}`, () =>
        api.call<Record<string, any>>("POST", `/v1/endpoints/${endpointId}/events/${eventId}/replay`, {
          target_url: opts.to,
          ...(opts.mode ? { mode: opts.mode } : {}),
          ...(opts.secret ? { target_secret: opts.secret } : {}),
        }),
      );
      out.result(res, () =>
        res.result === "network_error"
          ? `network error: ${res.network_failure_reason} after ${res.duration_ms} ms`
          : `${res.result}: HTTP ${res.target_status} in ${res.duration_ms} ms (${res.mode})`,
      );
    });
  return program;
}

async function tail({ out, api }: { out: Output; api: Api }, endpointId: string, lines: number): Promise<void> {
  const base = `/v1/endpoints/${endpointId}/events`;
  const first = await api.call<{ items: Summary[]; nextAfter?: string; nextAfterId?: string }>("GET", `${base}?limit=${Math.min(Math.max(lines, 1), 200)}`);
  const show = (items: Summary[]) => {
    for (const e of [...items].reverse()) out.result(e, () => eventLine(e));
  };
  show(lines > 0 ? first.items : []);
  let cursor = first.nextAfter && first.nextAfterId ? `&after=${encodeURIComponent(first.nextAfter)}&afterId=${first.nextAfterId}` : "";
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  if (!out.json) process.stderr.write(`following ${endpointId} (Ctrl-C to stop)\n`);
  let backoff = 1000;
  while (!stop.signal.aborted) {
    try {
      const page = await api.call<{ items: Summary[]; nextAfter?: string; nextAfterId?: string }>(
        "GET",
        `${base}?wait=25&limit=200${cursor}`,
        undefined,
        stop.signal,
      );
      show(page.items);
      if (page.nextAfter && page.nextAfterId) cursor = `&after=${encodeURIComponent(page.nextAfter)}&afterId=${page.nextAfterId}`;
      backoff = 1000;
    } catch (err) {
      if (stop.signal.aborted) break;
      if (err instanceof ApiError && err.status >= 500) {
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 15_000);
        continue;
      }
      throw err;
    }
  }
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const program = buildCli(env);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof ApiError) {
      process.stderr.write(`error: ${err.message}${err.code ? ` (${err.code}` : ""}${err.requestId ? `, request ${err.requestId})` : err.code ? ")" : ""}\n`);
      return 1;
    }
    const message = (err as { reason?: string; message?: string }).message ?? String(err);
    process.stderr.write(`error: ${message}\n`);
    return 1;
  }
}
