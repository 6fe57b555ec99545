import { InvalidArgumentError } from "commander";
import { uuid } from "@whc/api-model";
import { timeArgument } from "../event-filters.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The longest `--retry-for`: a day. */
const MAX_RETRY_MS = 86_400_000;

/** `--retry-for`: `30s`, `5m`, `1h`, `1500ms`, or `0` (no retry). */
export function durationArgument(value: string): number {
  if (value === "0") return 0;
  const m = /^(\d{1,8})(ms|s|m|h)$/.exec(value);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
  if (!(ms >= 0 && ms <= MAX_RETRY_MS)) throw new InvalidArgumentError("a duration up to 24h: 0, 1500ms, 30s, 5m, 2h");
  return ms;
}

/** `5m`, `1m30s`, `1.5s`, `800ms`: a duration as people read it. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000 && Math.round(ms / 100) % 10 !== 0) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  const parts = [
    [Math.floor(s / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ] as const;
  return parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join("") || "0s";
}

/** When to re-sign (design §19): `stale` (the default) only events older than the provider's tolerance. */
export const RESIGN_MODES = ["stale", "always", "never"] as const;
export type ResignMode = (typeof RESIGN_MODES)[number];

/** `--resign` alone is `stale`; `--resign=always`; `--no-resign` is `never` (commander gives false). */
export function resignArgument(value: string): ResignMode {
  if (!(RESIGN_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${RESIGN_MODES.join(", ")}`);
  return value as ResignMode;
}

export function resignModeOf(option: ResignMode | boolean | undefined): ResignMode {
  if (option === false) return "never";
  if (option === undefined || option === true) return "stale";
  return option;
}

/** Where `--since` starts: a time (from `2h` ago or an ISO time), or an event (itself included). */
export type Since = { at: string } | { eventId: string };

export function sinceArgument(value: string): Since {
  if (uuid.safeParse(value).success) return { eventId: value.toLowerCase() };
  try {
    return { at: timeArgument(value) };
  } catch {
    throw new InvalidArgumentError("a duration ago (30m, 2h, 7d), an ISO 8601 time (2026-01-31T12:00:00Z) or an event id");
  }
}

/** `--heartbeat-interval` (hidden; tests shorten it): seconds, at least 0.05. */
export function secondsToMs(min: number, max: number) {
  return (value: string): number => {
    const seconds = Number(value);
    if (!Number.isFinite(seconds) || seconds < min || seconds > max) throw new InvalidArgumentError(`seconds, from ${min} to ${max}`);
    return Math.round(seconds * 1000);
  };
}
