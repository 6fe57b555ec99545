import { cursorAfter, type ApiClient, type Cursor, type EndpointJson, type EventListJson, type EventSummaryJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { clear, h } from "./dom.js";
import { createFilterForm, filterQuery, NO_FILTERS, type Filters } from "./event-filters.js";
import { size, time } from "./format.js";

export interface EventsPane {
  readonly element: HTMLElement;
  /** Shows the endpoint's newest events, then follows new captures until `leave`. */
  show(endpoint: EndpointJson): void;
  /** Stops following and empties the pane. */
  leave(): void;
  /** Marks the event open (and read), with its forward state as it was just read. */
  opened(event: Pick<EventSummaryJson, "id" | "readAt" | "forwardState">): void;
  /** The shown endpoint changed (it was updated): its heading follows; its events stay. */
  refresh(endpoint: EndpointJson): void;
}

interface Deps {
  client: ApiClient;
  banner: Banner;
  onOpen(endpoint: EndpointJson, eventId: string): void;
  /** New captures were shown (the endpoint list's counts are stale). */
  onCaptured(): void;
  /** The endpoint's own controls, shown under its heading. */
  settings: HTMLElement;
}

const PAGE_SIZE = "50";


function olderOf(page: EventListJson): { before: string; beforeId: string } | undefined {
  return page.nextBefore && page.nextBeforeId ? { before: page.nextBefore, beforeId: page.nextBeforeId } : undefined;
}

function row(e: EventSummaryJson, open: boolean, onclick: () => void): HTMLElement {
  return h(
    "li",
    { class: open ? "selected" : "", "data-testid": "event-row", "data-event-id": e.id },
    h(
      "button",
      { type: "button", class: "link", onclick },
      h("span", { class: "method" }, e.method),
      h("span", { class: "time" }, time(e.receivedAt)),
      h("span", { class: "type" }, e.canonicalEventType ?? "—"),
      h("span", { class: `badge ${e.verification}`, title: e.verificationFailureReason ?? "" }, e.verification),
      h("span", { class: "size" }, size(e.originalSizeBytes)),
      e.truncated ? h("span", { class: "badge warn" }, "truncated") : null,
      e.decryption !== "ok" ? h("span", { class: "badge warn" }, e.decryption) : null,
      e.forwardState ? h("span", { class: `badge forward ${e.forwardState}`, "data-testid": "forward-badge", title: "forward state" }, `→ ${e.forwardState}`) : null,
      e.readAt ? null : h("span", { class: "dot", title: "unread" }),
    ),
  );
}

/** One endpoint's events: filters, the newest page, older pages on demand, new captures live. */
export function createEventsPane({ client, banner, onOpen, onCaptured, settings }: Deps): EventsPane {
  const element = h("section", { class: "pane events", "data-testid": "events" });
  let endpoint: EndpointJson | undefined;
  let filters: Filters = NO_FILTERS;
  let events: EventSummaryJson[] = [];
  let older: { before: string; beforeId: string } | undefined;
  let excluded: number | undefined;
  let openId: string | undefined;
  /** This view (endpoint and filters): aborted when the user leaves it, which ends its calls and its follow. */
  let view: AbortController | undefined;
  let live = false;

  function leave(): void {
    view?.abort();
    view = undefined;
    live = false;
  }

  async function load(ep: EndpointJson): Promise<void> {
    leave();
    const control = new AbortController();
    view = control;
    const page = await banner.guarded(() => client.events.list(ep.id, { ...filterQuery(filters), limit: PAGE_SIZE }, control.signal));
    if (control.signal.aborted) return;
    if (!page) return render();
    events = page.items;
    older = olderOf(page);
    excluded = page.searchExcludedMetadataOnlyCount;
    void follow(ep, cursorAfter(page), control.signal);
    render();
  }

  async function follow(ep: EndpointJson, after: Cursor, signal: AbortSignal): Promise<void> {
    live = true;
    try {
      const captures = client.follow(ep.id, {
        after,
        filters: filterQuery(filters),
        signal,
        onRetry: (err) => banner.show(err),
        // After each page of captures: one render, one refresh of the counts.
        onCursor: () => {
          render();
          onCaptured();
        },
      });
      for await (const e of captures) {
        if (signal.aborted) return;
        if (!events.some((known) => known.id === e.id)) events.unshift(e);
      }
    } catch (err) {
      banner.show(err);
    } finally {
      if (!signal.aborted) {
        live = false;
        render();
      }
    }
  }

  async function loadOlder(): Promise<void> {
    const ep = endpoint;
    const from = older;
    const signal = view?.signal;
    if (!ep || !from) return;
    const page = await banner.guarded(() => client.events.list(ep.id, { ...filterQuery(filters), limit: PAGE_SIZE, ...from }, signal));
    if (!page || signal?.aborted) return;
    events = [...events, ...page.items];
    older = olderOf(page);
    render();
  }

  // Built once and kept in place: a capture arriving while a filter is typed leaves it typed, and focused.
  const filterForm = createFilterForm((applied) => {
    filters = applied;
    if (endpoint) void load(endpoint);
  });
  const title = h("h2");
  const hint = h("p", { class: "hint" });
  const results = h("div");

  function renderHeading(ep: EndpointJson): void {
    clear(title, `${ep.displayName} `, h("span", { class: "live", "data-testid": "live" }, live ? "● live" : ""));
    clear(hint, "Send webhooks to ", h("code", {}, ep.webhookUrl));
  }

  function render(): void {
    const ep = endpoint;
    if (!ep) return;
    renderHeading(ep);
    const rows = events.map((e) => row(e, e.id === openId, () => onOpen(ep, e.id)));
    clear(
      results,
      excluded ? h("p", { class: "hint", "data-testid": "excluded" }, `${excluded} metadata-only event${excluded === 1 ? "" : "s"} not searched`) : null,
      rows.length ? h("ul", { class: "list events" }, ...rows) : h("p", { class: "empty", "data-testid": "no-events" }, "No events yet. Waiting for captures…"),
      older ? h("button", { type: "button", "data-testid": "older", onclick: () => void loadOlder() }, "Older events") : null,
    );
  }

  return {
    element,
    show(ep) {
      leave();
      endpoint = ep;
      events = [];
      older = undefined;
      excluded = undefined;
      openId = undefined;
      // Until the first page comes: the heading, and no rows of the endpoint shown before.
      renderHeading(ep);
      clear(results);
      clear(element, title, hint, settings, filterForm, results);
      void load(ep);
    },
    leave() {
      leave();
      endpoint = undefined;
      clear(element);
    },
    opened({ id, readAt, forwardState }) {
      openId = id;
      const e = events.find((known) => known.id === id);
      if (e) Object.assign(e, { readAt, forwardState });
      render();
    },
    refresh(ep) {
      if (endpoint?.id !== ep.id) return;
      endpoint = ep;
      render();
    },
  };
}
