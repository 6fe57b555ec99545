import { type Command, InvalidArgumentError, Option } from "commander";
import type { ApiClient, RedeliveryJobJson } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { redeliveryFilterOf, withFilterOptions, type FilterOptions } from "../event-filters.js";
import { CliError } from "../exit-codes.js";

interface RedeliverOptions extends FilterOptions {
  dryRun?: boolean;
  wait?: boolean;
  /** Seconds --wait follows the job at most. */
  timeout: number;
  /** Milliseconds between two looks at the job (--wait). */
  interval: number;
}

function secondsArgument(value: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("a number of seconds, at least 1");
  return Number(value);
}

function intervalArgument(value: string): number {
  if (!/^\d{2,6}$/.test(value) || Number(value) < 100) throw new InvalidArgumentError("milliseconds, at least 100");
  return Number(value);
}

/** One line a person reads: where the job stands. */
export function progressLine(j: RedeliveryJobJson): string {
  return `${j.state}: ${j.done + j.failed}/${j.total} ended (${j.done} delivered, ${j.failed} failed), ${j.queued} put back`;
}

function startedText(j: RedeliveryJobJson): string {
  if (j.state === "done" && j.total === 0) return `redelivery job ${j.id}: nothing to redeliver (done)`;
  return `redelivery job ${j.id} started: ${j.total} deliveries (${j.state})\nfollow it: whc redeliveries get ${j.endpointId} ${j.id} --wait`;
}

/**
 * Follows the job until it is no longer running (or the time runs out): a progress line on
 * stderr whenever it moved, then the job. Exits 0 when every delivery it put back ended
 * delivered, else with bad input's code (some failed) or unavailable's (still running at the deadline).
 */
async function follow(ctx: Context, api: ApiClient, job: RedeliveryJobJson, opts: Pick<RedeliverOptions, "timeout" | "interval">): Promise<void> {
  const deadline = Date.now() + opts.timeout * 1000;
  let last = "";
  let current = job;
  for (;;) {
    const line = progressLine(current);
    if (line !== last && !ctx.out.json) process.stderr.write(`${line}\n`);
    last = line;
    if (current.state !== "running" || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, opts.interval));
    current = await api.redeliveries.get(current.endpointId, current.id);
  }
  ctx.out.result(current, () => `redelivery job ${current.id} ${progressLine(current)}`);
  if (current.state === "running") throw new CliError(`redelivery job ${current.id} still running after ${opts.timeout} s (whc redeliveries get to look again)`, "unavailable");
  if (current.failed > 0) throw new CliError(`${current.failed} of ${current.total} deliveries failed (whc events list --forward-state failed, --forward-state exhausted)`);
}

async function redeliver(ctx: Context, ref: string, opts: RedeliverOptions): Promise<void> {
  const api = ctx.api();
  const endpoint = await resolveEndpoint(api, ref);
  const filter = redeliveryFilterOf(opts);
  if (opts.dryRun) {
    const { count } = await ctx.out.busy("counting", () => api.redeliveries.count(endpoint.id, filter));
    return ctx.out.result({ count }, () => `${count} ${count === 1 ? "delivery" : "deliveries"} of ${endpoint.slug} would be redelivered`);
  }
  const job = await ctx.out.busy("starting", () => api.redeliveries.start(endpoint.id, filter));
  if (!opts.wait) return ctx.out.result(job, () => startedText(job));
  if (!ctx.out.json) process.stderr.write(`redelivery job ${job.id} started: ${job.total} deliveries\n`);
  await follow(ctx, api, job, opts);
}

function withWaitOptions(command: Command): Command {
  return command
    .option("--wait", "follow the job until it is done, printing its progress; exits non-zero when a delivery failed")
    .addOption(new Option("--timeout <seconds>", "how long --wait follows it at most").default(3600).argParser(secondsArgument))
    .addOption(new Option("--interval <ms>", "how often --wait looks at it").default(1000).argParser(intervalArgument).hideHelp());
}

/** `whc redeliver` and `whc redeliveries list|get|cancel` (design §18): bulk redelivery jobs over /v1. */
export function redeliverCommands(program: Command, ctx: () => Context): void {
  withWaitOptions(
    withFilterOptions(
      program
        .command("redeliver")
        .description(
          "send the endpoint's events matching the filters to their destinations again, as a job the service runs " +
            "(each delivery that ended delivered, failed, exhausted or skipped; with --destination, only that destination's)",
        )
        .argument("<endpoint>", "id or slug")
        .option("--dry-run", "only count the deliveries it would redo"),
    ),
  ).action((ref: string, opts: RedeliverOptions) => redeliver(ctx(), ref, opts));

  const jobs = program.command("redeliveries").description("bulk redelivery jobs (whc redeliver starts one)");
  jobs
    .command("list")
    .description("the endpoint's redelivery jobs, newest first")
    .argument("<endpoint>", "id or slug")
    .action(async (ref: string) => {
      const c = ctx();
      const api = c.api();
      const endpoint = await resolveEndpoint(api, ref);
      const list = await c.out.busy("listing", () => api.redeliveries.list(endpoint.id));
      c.out.result(list, () => (list.items.length ? list.items.map((j) => `${j.id}  ${j.createdAt}  ${progressLine(j)}`).join("\n") : "no redelivery jobs"));
    });
  withWaitOptions(
    jobs
      .command("get")
      .description("where a redelivery job stands")
      .argument("<endpoint>", "id or slug")
      .argument("<job>", "the job's id"),
  ).action(async (ref: string, jobId: string, opts: Pick<RedeliverOptions, "wait" | "timeout" | "interval">) => {
    const c = ctx();
    const api = c.api();
    const endpoint = await resolveEndpoint(api, ref);
    const job = await c.out.busy("reading", () => api.redeliveries.get(endpoint.id, jobId));
    if (opts.wait) return follow(c, api, job, opts);
    c.out.result(job, () => `redelivery job ${job.id} ${progressLine(job)}`);
  });
  jobs
    .command("cancel")
    .description("stop a running redelivery job's walk (what it already put back still goes)")
    .argument("<endpoint>", "id or slug")
    .argument("<job>", "the job's id")
    .action(async (ref: string, jobId: string) => {
      const c = ctx();
      const api = c.api();
      const endpoint = await resolveEndpoint(api, ref);
      const job = await c.out.busy("canceling", () => api.redeliveries.cancel(endpoint.id, jobId));
      c.out.result(job, () => `redelivery job ${job.id} ${progressLine(job)}`);
    });
}
