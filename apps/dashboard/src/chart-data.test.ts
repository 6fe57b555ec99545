import { describe, it, expect } from "vitest";
import type { EventListJson, EventSummaryJson, ListEventsQueryText } from "@whc/api-model";
import { countPerMinute, readWindow, sum, WINDOW_MINUTES } from "./chart-data.js";

const NOW = Date.parse("2026-11-26T18:00:00.000Z");

function event(i: number, minutesAgo: number, extra: Partial<EventSummaryJson> = {}): EventSummaryJson {
  return {
    id: `00000000-0000-7000-8000-${String(i).padStart(12, "0")}`,
    endpointId: "00000000-0000-7000-8000-000000000000",
    receivedAt: new Date(NOW - minutesAgo * 60_000).toISOString(),
    method: "POST",
    provider: "generic",
    verification: "unverified",
    responseCode: 200,
    truncated: false,
    originalSizeBytes: 10,
    decryption: "ok",
    ...extra,
  };
}

/** A list answering from `all` (newest first) as the API pages it, recording each query. */
function fakeList(all: EventSummaryJson[]) {
  const queries: ListEventsQueryText[] = [];
  const list = async (q: ListEventsQueryText): Promise<EventListJson> => {
    queries.push(q);
    const from = Date.parse(q.from!);
    const start = q.beforeId ? all.findIndex((e) => e.id === q.beforeId) + 1 : 0;
    const inWindow = all.slice(start).filter((e) => Date.parse(e.receivedAt) >= from);
    const items = inWindow.slice(0, Number(q.limit));
    const last = items.at(-1);
    return inWindow.length > items.length && last ? { items, nextBefore: last.receivedAt, nextBeforeId: last.id } : { items };
  };
  return { list, queries };
}

describe("the charts' counts, from the event list", () => {
  it("pages the window back from now and says when the bound cut it", async () => {
    const all = Array.from({ length: 450 }, (_, i) => event(450 - i, i / 10));
    const whole = fakeList(all);
    const w = await readWindow(whole.list, NOW);
    expect(w.events).toHaveLength(450);
    expect(w.capped).toBe(false);
    expect(whole.queries.map((q) => q.limit)).toEqual(["200", "200", "200"]);

    const capped = fakeList(all);
    const c = await readWindow(capped.list, NOW, undefined, 300);
    expect(c.events).toHaveLength(300);
    expect(c.capped).toBe(true);
    expect(capped.queries.map((q) => q.limit)).toEqual(["200", "100"]);
  });

  it("counts captures, verdicts and delivery outcomes per minute", () => {
    const stats = countPerMinute({
      events: [
        event(1, 0.5, { verification: "failed" }),
        event(2, 0.2, { forwardState: "delivered" }),
        event(3, 10.5, { verification: "verified", forwardState: "failed" }),
        event(4, 59.9, { forwardState: "exhausted" }),
        event(5, 61),
      ],
      capped: false,
      from: NOW - WINDOW_MINUTES * 60_000,
      to: NOW,
    });
    expect(stats.captures).toHaveLength(WINDOW_MINUTES);
    expect(stats.captures[59]).toBe(2);
    expect(stats.failed[59]).toBe(1);
    expect(stats.verified[49]).toBe(1);
    expect(stats.forwardFailed[49]).toBe(1);
    expect(stats.exhausted[0]).toBe(1);
    expect(sum(stats.captures)).toBe(4);
    expect(sum(stats.delivered)).toBe(1);
  });
});
