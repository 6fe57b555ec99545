import type { ApiClient, EventDetailJson, EventSummaryJson } from "@whc/api-model";
import type { Filters } from "./event-filters.js";
import { filterQuery } from "./event-filters.js";

/**
 * The sub-path and query of listed events. The list does not carry them (they are sealed with
 * the body, ADR 0009) and reading each event's detail would mark it read, so they come from the
 * export (which does not), bounded to the time span of the rows that lack one: ADR 0022.
 */
export interface PathLoader {
  /** The path of an event once known ("" for the webhook URL itself). */
  get(id: string): string | undefined;
  /** Asks for the paths of these rows; `onPaths` is told as they come. */
  want(events: readonly EventSummaryJson[]): void;
  dispose(): void;
}

/** Rows asked for at once; and how far past them an export is read before it is given up. */
const BATCH = 100;
const SLACK = 4;

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = rest.indexOf("\n")) >= 0) {
        yield rest.slice(0, at);
        rest = rest.slice(at + 1);
      }
    }
    if (rest) yield rest;
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}

export function createPathLoader(client: ApiClient, endpointId: string, filters: Filters, onPaths: () => void): PathLoader {
  const known = new Map<string, string>();
  const pending = new Map<string, EventSummaryJson>();
  const control = new AbortController();
  let running = false;

  async function fetchBatch(batch: EventSummaryJson[]): Promise<void> {
    const times = batch.map((e) => Date.parse(e.receivedAt));
    const from = new Date(Math.min(...times)).toISOString();
    // `to` is exclusive: one millisecond past the newest row.
    const to = new Date(Math.max(...times) + 1).toISOString();
    const wanted = new Set(batch.map((e) => e.id));
    const stream = await client.events.export(endpointId, { ...filterQuery(filters), from, to }, control.signal);
    let read = 0;
    for await (const line of lines(stream)) {
      if (!line) continue;
      const d = JSON.parse(line) as Pick<EventDetailJson, "id" | "path">;
      known.set(d.id, d.path);
      wanted.delete(d.id);
      if (wanted.size === 0 || ++read > batch.length * SLACK) break;
    }
    // Deleted since it was listed, or past the slack: nothing to show, and not asked again.
    for (const id of wanted) known.set(id, "");
  }

  async function run(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (pending.size && !control.signal.aborted) {
        const batch = [...pending.values()].slice(0, BATCH);
        for (const e of batch) pending.delete(e.id);
        await fetchBatch(batch);
        onPaths();
      }
    } catch {
      // Without paths the rows still read; the next rows shown ask again.
      pending.clear();
    } finally {
      running = false;
    }
  }

  return {
    get: (id) => known.get(id),
    want(events) {
      for (const e of events) if (!known.has(e.id)) pending.set(e.id, e);
      if (pending.size) queueMicrotask(() => void run());
    },
    dispose: () => control.abort(),
  };
}
