import type { Command } from "commander";
import type { CreateEndpointRequest } from "@whc/api-model";
import { PROVIDER_NAMES } from "@whc/signatures";
import type { Context } from "../context.js";
import { oneOf, table } from "../output.js";

interface CreateOptions {
  slug?: string;
  name?: string;
  provider?: string;
  secret?: string;
  metadataOnly?: boolean;
}

function createRequest(opts: CreateOptions): CreateEndpointRequest {
  return {
    ...(opts.slug ? { slug: opts.slug } : {}),
    ...(opts.name ? { displayName: opts.name } : {}),
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.secret ? { secret: opts.secret } : {}),
    ...(opts.metadataOnly ? { operatingMode: "metadata_only" } : {}),
  };
}

/** `whc endpoints list|create|delete`. */
export function endpointCommands(program: Command, ctx: () => Context): void {
  const endpoints = program.command("endpoints").description("receiving endpoints");

  endpoints.command("list").action(async () => {
    const { out, api } = ctx();
    const client = api();
    const res = await out.busy("listing", () => client.endpoints.list());
    out.result(res.items, () =>
      table([["ID", "SLUG", "EVENTS", "STATUS", "WEBHOOK URL"], ...res.items.map((e) => [e.id, e.slug, String(e.eventCount), e.status, e.webhookUrl])]),
    );
  });

  endpoints
    .command("create")
    .option("--slug <slug>")
    .option("--name <displayName>")
    .option("--provider <provider>", oneOf(PROVIDER_NAMES))
    .option("--secret <secret>", "the signing secret (write-only)")
    .option("--metadata-only", "never store bodies")
    .action(async (opts: CreateOptions) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("creating", () => client.endpoints.create(createRequest(opts)));
      out.result(e, () => `created ${e.slug} (${e.id})\nsend webhooks to ${e.webhookUrl}`);
    });

  endpoints
    .command("delete")
    .argument("<id>")
    .action(async (id: string) => {
      const { out, api } = ctx();
      const client = api();
      await out.busy("deleting", () => client.endpoints.delete(id));
      out.result({ id, deleted: true }, () => `deleted ${id} and its events`);
    });
}
