import type { EventListJson, EventSummaryJson, ListEventsQueryText } from "@whc/api-model";

/**
 * An endpoint's recent activity, counted in the page from the event list (there is no stats
 * route): the list paged through the window, newest first, up to a bound (ADR 0021).
 */
export const WINDOW_MINUTES = 60;
export const MAX_EVENTS = 2000;
const PAGE = 200;

export type ListPage = (query: ListEventsQueryText, signal?: AbortSignal) => Promise<EventListJson>;

export interface Window {
  events: EventSummaryJson[];
  /** The window was cut at `MAX_EVENTS`: older events of it were not read. */
  capped: boolean;
  from: number;
  to: number;
}

/** Reads the window's events: pages of 200 back from now, until the window or the bound ends. */
export async function readWindow(list: ListPage, now: number, signal?: AbortSignal, max = MAX_EVENTS): Promise<Window> {
  const from = now - WINDOW_MINUTES * 60_000;
  const events: EventSummaryJson[] = [];
  let cursor: { before: string; beforeId: string } | undefined;
  for (;;) {
    const limit = Math.min(PAGE, max - events.length);
    const page = await list({ from: new Date(from).toISOString(), limit: String(limit), ...cursor }, signal);
    events.push(...page.items);
    const more = Boolean(page.nextBefore && page.nextBeforeId);
    if (!more) return { events, capped: false, from, to: now };
    if (events.length >= max) return { events, capped: true, from, to: now };
    cursor = { before: page.nextBefore!, beforeId: page.nextBeforeId! };
  }
}

export interface Series {
  captures: number[];
  verified: number[];
  failed: number[];
  unverified: number[];
  delivered: number[];
  pending: number[];
  forwardFailed: number[];
  exhausted: number[];
}

export interface Stats extends Series {
  /** Bucket i covers [start + i min, start + (i+1) min). */
  start: number;
  total: number;
  capped: boolean;
  /** When capped: the oldest event read; the buckets before it are not counted. */
  countedFrom: number;
}

/** Counts per minute over the window, oldest bucket first. */
export function countPerMinute(w: Window): Stats {
  const zeros = () => new Array<number>(WINDOW_MINUTES).fill(0);
  const start = w.to - WINDOW_MINUTES * 60_000;
  const series: Series = { captures: zeros(), verified: zeros(), failed: zeros(), unverified: zeros(), delivered: zeros(), pending: zeros(), forwardFailed: zeros(), exhausted: zeros() };
  let oldest = w.to;
  for (const e of w.events) {
    const at = Date.parse(e.receivedAt);
    oldest = Math.min(oldest, at);
    const i = Math.floor((at - start) / 60_000);
    if (i < 0 || i >= WINDOW_MINUTES) continue;
    series.captures[i]! += 1;
    const verdict = e.verification === "verified" || e.verification === "failed" ? e.verification : "unverified";
    series[verdict][i]! += 1;
    // Held deliveries wait as pending ones do; skipped and duplicate ones were never to be sent.
    const state = e.forwardState === "failed" ? "forwardFailed" : e.forwardState === "held" ? "pending" : e.forwardState;
    if (state && state !== "skipped" && state !== "duplicate") series[state][i]! += 1;
  }
  return { ...series, start, total: w.events.length, capped: w.capped, countedFrom: w.capped ? oldest : start };
}

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
