import { type Command, Option } from "commander";
import {
  ALERT_CHANNEL_TYPES,
  ALERT_EVENTS,
  type AlertChannelJson,
  type AlertDeliveryJson,
  type ApiClient,
  type CreateAlertChannelRequest,
} from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { CliError } from "../exit-codes.js";
import { oneOf, table } from "../output.js";

interface CreateOptions {
  name?: string;
  type?: string;
  url?: string;
  event?: string[];
  endpoint?: string[];
  secretFromEnv?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

const lastOf = (d: AlertDeliveryJson | null) => (d ? `${d.type} ${d.state}${d.status ? ` ${d.status}` : d.error ? ` ${d.error}` : ""} ${d.at}` : "none yet");

function channelRow(c: AlertChannelJson): string[] {
  return [c.id, c.name, c.type, c.events.join(","), c.endpointIds.length ? String(c.endpointIds.length) : "all", lastOf(c.lastDelivery)];
}

/** A channel named by id or by name (names are unique in an account). */
async function resolveChannel(api: ApiClient, ref: string): Promise<AlertChannelJson> {
  const { items } = await api.alerts.list();
  const found = items.find((c) => c.id === ref.toLowerCase()) ?? items.find((c) => c.name === ref);
  if (!found) throw new CliError(`no alert channel ${ref} (give its id or name; whc alerts list shows them)`, "notFound");
  return found;
}

async function createChannel(ctx: Context, opts: CreateOptions): Promise<void> {
  const { out, env } = ctx;
  if (!opts.name || !opts.type || !opts.url) throw new CliError("give the channel a --name, a --type and a --url");
  if (!opts.event?.length) throw new CliError(`give at least one --event: ${oneOf(ALERT_EVENTS)}`);
  let secret: string | undefined;
  if (opts.secretFromEnv) {
    secret = env[opts.secretFromEnv];
    if (!secret) throw new CliError(`${opts.secretFromEnv} is not set: it names the channel's secret`);
  }
  const api = ctx.api();
  const endpointIds = await Promise.all((opts.endpoint ?? []).map(async (ref) => (await resolveEndpoint(api, ref)).id));
  const body: CreateAlertChannelRequest = {
    name: opts.name,
    type: opts.type as CreateAlertChannelRequest["type"],
    url: opts.url,
    events: opts.event as CreateAlertChannelRequest["events"],
    ...(endpointIds.length ? { endpointIds } : {}),
    ...(secret ? { secret } : {}),
  };
  const created = await out.busy("creating alert channel", () => api.alerts.create(body));
  const shown = created.secret && !secret ? `\nsecret ${created.secret} (shown this once: verify its alerts with it)` : "";
  const warned = (created.warnings ?? []).map((w) => `\nwarning: ${w.message}`).join("");
  out.result(created, () => `created alert channel ${created.id} (${created.name}, ${created.type}: ${created.events.join(", ")})${shown}${warned}`);
}

/** Queues a test alert; with --wait, follows the channel's lastDelivery until that alert settles. */
async function testChannel(ctx: Context, ref: string, opts: { wait?: boolean; timeout: string }): Promise<void> {
  const { out } = ctx;
  const api = ctx.api();
  const channel = await resolveChannel(api, ref);
  const queued = await out.busy("queueing a test alert", () => api.alerts.test(channel.id));
  if (!opts.wait) return out.result(queued, () => `queued test alert ${queued.alertId} to ${channel.name}`);
  const deadline = Date.now() + Number(opts.timeout) * 1000;
  const settled = await out.busy("waiting for the channel's answer", async () => {
    for (;;) {
      const { items } = await api.alerts.list();
      const last = items.find((c) => c.id === channel.id)?.lastDelivery;
      if (last?.alertId === queued.alertId && last.state !== "pending") return last;
      if (Date.now() >= deadline) return last?.alertId === queued.alertId ? last : undefined;
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  const result = { ...queued, delivery: settled ?? null };
  if (settled?.state !== "delivered") {
    out.result(result, () => `test alert ${queued.alertId}: ${settled ? lastOf(settled) : "not sent yet"}`);
    throw new CliError(`the test alert was ${settled ? settled.state : "not sent in time"}`, "unavailable");
  }
  out.result(result, () => `test alert ${queued.alertId} delivered to ${channel.name} (${settled.status})`);
}

/** `whc alerts list|create|delete|test` (design §18): alert channels over /v1. */
export function alertCommands(program: Command, ctx: () => Context): void {
  const alerts = program.command("alerts").description("alert channels: where the service tells you a delivery was given up, a signature failed, a listener stalled...");

  alerts
    .command("list")
    .description("the account's alert channels, with how each one's last alert went")
    .action(async () => {
      const { out, api } = ctx();
      const list = await out.busy("listing alert channels", () => api().alerts.list());
      out.result(list, () => table([["ID", "NAME", "TYPE", "EVENTS", "ENDPOINTS", "LAST ALERT"], ...list.items.map(channelRow)]));
    });

  alerts
    .command("create")
    .description("create a channel; a webhook channel's secret is printed once")
    .option("--name <name>", "unique in the account")
    .addOption(new Option("--type <type>", "webhook (signed JSON) or slack (an incoming webhook)").choices(ALERT_CHANNEL_TYPES))
    .option("--url <url>", "where alerts go")
    .addOption(new Option("--event <type>", `what to send, repeatable: ${oneOf(ALERT_EVENTS)}`).choices(ALERT_EVENTS).argParser(collect))
    .addOption(new Option("--endpoint <endpoint>", "only this endpoint's alerts (id or slug), repeatable").argParser(collect))
    .option("--secret-from-env <name>", "webhook: the signing secret (whsec_...) is this environment variable's value; absent: one is generated")
    .action((opts: CreateOptions) => createChannel(ctx(), opts));

  alerts
    .command("delete")
    .description("delete a channel (by id or name) and the alerts waiting for it")
    .argument("<channel>")
    .action(async (ref: string) => {
      const { out, api } = ctx();
      const channel = await resolveChannel(api(), ref);
      await out.busy("deleting alert channel", () => api().alerts.delete(channel.id));
      out.result({ id: channel.id, deleted: true }, () => `deleted alert channel ${channel.id} (${channel.name})`);
    });

  alerts
    .command("test")
    .description("send a test alert to a channel (by id or name)")
    .argument("<channel>")
    .option("--wait", "wait for the channel's answer; exit 4 unless it accepted the alert")
    .option("--timeout <seconds>", "with --wait: how long", "30")
    .action((ref: string, opts: { wait?: boolean; timeout: string }) => testChannel(ctx(), ref, opts));
}
