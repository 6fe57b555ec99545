import { type Command, InvalidArgumentError, Option } from "commander";
import { checkShape, dedupeSettings, MAX_DEDUPE_WINDOW_SECONDS, type DedupeSettings } from "@whc/api-model";

/** The command-line flags of an endpoint's deduplication (design §17). */
export interface DedupeFlags {
  /** `auto`, or comma-separated fields; false for `--no-dedupe` (update only). */
  dedupe?: string | false;
  /** Seconds. */
  dedupeWindow?: number;
}

/** The window `--dedupe` gets when none is given or kept: an hour. */
export const DEFAULT_DEDUPE_WINDOW_S = 3600;

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `10m`, `1h`, `7d` as seconds. */
function windowArgument(value: string): number {
  const m = /^(\d{1,7})([smhd]?)$/.exec(value);
  if (!m) throw new InvalidArgumentError("seconds, or a duration: 90s, 10m, 1h, 7d");
  return Number(m[1]) * UNIT_S[m[2] || "s"]!;
}

/** The dedupe flags create and update take. */
export function withDedupeOptions(command: Command): Command {
  return command
    .option(
      "--dedupe <key>",
      "deduplicate captures: `auto` (the provider's own delivery or event id) or comma-separated fields (header.<name>, query.<name>, body.<a.b>); a repeat is stored and answered, marked duplicateOf, not forwarded",
    )
    .addOption(
      new Option("--dedupe-window <duration>", `how long a first capture's key makes repeats duplicates: seconds or 10m, 1h, 7d (at most 30d; default ${DEFAULT_DEDUPE_WINDOW_S / 3600}h)`).argParser(
        windowArgument,
      ),
    );
}

/**
 * The `dedupe` object from the flags, on top of what the endpoint has (`current`, on update: a
 * window alone keeps the key, a key alone keeps the window), checked before anything is sent.
 * Null for `--no-dedupe`; undefined when no dedupe flag was given.
 */
export function dedupeOf(opts: DedupeFlags, current?: DedupeSettings): DedupeSettings | null | undefined {
  if (opts.dedupe === false) {
    if (opts.dedupeWindow !== undefined) throw new Error("--no-dedupe removes deduplication: give it without --dedupe-window (nothing was sent)");
    return null;
  }
  if (opts.dedupe === undefined && opts.dedupeWindow === undefined) return undefined;
  if (opts.dedupe === undefined && !current) throw new Error("--dedupe-window goes with --dedupe (auto, or the fields) on an endpoint that does not deduplicate yet (nothing was sent)");
  const key = opts.dedupe === undefined ? keyOf(current!) : opts.dedupe.trim() === "auto" ? { key: "auto" as const } : { fields: opts.dedupe.split(",").map((f) => f.trim()) };
  const wanted = { windowSeconds: opts.dedupeWindow ?? current?.windowSeconds ?? DEFAULT_DEDUPE_WINDOW_S, ...key };
  const checked = checkShape(dedupeSettings, wanted);
  if (checked.ok) return checked.value;
  const { field, message } = checked.problem;
  const flag = field.startsWith("dedupe.windowSeconds") || field === "windowSeconds" ? "--dedupe-window" : "--dedupe";
  const limit = flag === "--dedupe-window" ? ` (1s to ${MAX_DEDUPE_WINDOW_SECONDS / 86_400}d)` : "";
  throw new Error(`${flag}: ${field ? `${field}: ` : ""}${message}${limit} (nothing was sent)`);
}

function keyOf(d: DedupeSettings): Pick<DedupeSettings, "key" | "fields"> {
  return d.fields ? { fields: d.fields } : { key: "auto" };
}

/** How an endpoint deduplicates, in one line. */
export function dedupeText(d: DedupeSettings): string {
  const window = d.windowSeconds % 86_400 === 0 ? `${d.windowSeconds / 86_400}d` : d.windowSeconds % 3600 === 0 ? `${d.windowSeconds / 3600}h` : d.windowSeconds % 60 === 0 ? `${d.windowSeconds / 60}m` : `${d.windowSeconds}s`;
  return `${d.fields ? `on ${d.fields.join(", ")}` : "on the provider's own id (auto)"}, window ${window}`;
}
