import { cursorAfter, type Cursor, type EndpointJson, type EventListJson, type EventSummaryJson } from "@whc/api-model";
import { redeliverDialog } from "./redeliveries.js";
import { clear, h, isTyping } from "./dom.js";
import { eventRow, tableHead } from "./event-row.js";
import { createFilterForm, filterQuery, filtersOf, anyFilter, queryOf, type Filters } from "./event-filters.js";
import { createPathLoader, type PathLoader } from "./event-paths.js";
import { firstRequest } from "./first-request.js";
import { plural } from "./format.js";
import { withQuery, type Route } from "./router.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

const PAGE_SIZE = "50";

function olderOf(page: EventListJson): { before: string; beforeId: string } | undefined {
  return page.nextBefore && page.nextBeforeId ? { before: page.nextBefore, beforeId: page.nextBeforeId } : undefined;
}

/** What one list (endpoint and filters) holds; a new one replaces it when the filters change. */
interface ListState {
  filters: Filters;
  events: EventSummaryJson[];
  older?: { before: string; beforeId: string };
  excluded?: number;
  loaded: boolean;
  live: boolean;
  /** Ends the list's calls and its follow. */
  control: AbortController;
  paths: PathLoader;
}

/** j/k move the cursor, Enter opens it, / goes to the search; only while no field has the keys. */
function keyboard(table: () => HTMLTableSectionElement, search: HTMLInputElement, openId: () => string | undefined, cursor: { id?: string }): (e: KeyboardEvent) => void {
  return (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (isTyping(e.target)) {
      if (e.key === "Escape" && e.target === search) search.blur();
      return;
    }
    // The list is hidden (a phone showing the event): its keys are not for now.
    if (!search.offsetParent) return;
    if (e.key === "/") {
      e.preventDefault();
      search.focus();
      search.select();
      return;
    }
    const rows = [...table().querySelectorAll<HTMLTableRowElement>("tr[data-event-id]")];
    const at = rows.findIndex((r) => r.classList.contains("cursor"));
    const from = at >= 0 ? at : rows.findIndex((r) => r.dataset.eventId === openId());
    const down = e.key === "j" || (e.key === "ArrowDown" && e.target instanceof HTMLAnchorElement);
    const up = e.key === "k" || (e.key === "ArrowUp" && e.target instanceof HTMLAnchorElement);
    if (down || up) {
      e.preventDefault();
      const next = rows[Math.max(0, Math.min(rows.length - 1, from < 0 ? 0 : from + (down ? 1 : -1)))];
      if (!next) return;
      cursor.id = next.dataset.eventId;
      rows.forEach((r) => r.classList.toggle("cursor", r === next));
      next.querySelector("a")?.focus();
      next.scrollIntoView({ block: "nearest" });
    } else if (e.key === "Enter" && at >= 0 && !(e.target instanceof HTMLAnchorElement || e.target instanceof HTMLButtonElement)) {
      rows[at]!.querySelector("a")?.click();
    }
  };
}

/** The endpoint's events: filters, a dense table, older pages on demand, new captures live. */
function mountEvents(ctx: AppContext, ep: EndpointJson, first: Route): Mounted {
  let route = first;
  let state: ListState;
  /** The row j and k reached: kept across renders, as is the focus on its link. */
  const cursor: { id?: string } = {};
  const form = createFilterForm((f) => ctx.navigate({ ...route, query: withQuery(route.query, queryOf(f)) }));
  const status = h("div", { class: "list-status", "aria-live": "polite" });
  const tbody = h("tbody");
  const table = h("table", { class: "events-table", "data-testid": "events-table", "aria-label": "Events, newest first" }, tableHead(), tbody);
  const results = h("div", { class: "results" });
  const redeliver = redeliverDialog(ctx, ep, () => state.filters);
  // What a job redid shows in the list once its dialog is closed: the same filters again, and the
  // form left as it is (the close event comes a moment after the click: what was typed or chosen
  // in the form since is kept, not put back to the filters applied).
  redeliver.dialog.addEventListener("close", () => void load(state.filters, { keepForm: true }));
  const element = h("div", { class: "events", "data-testid": "events" }, form.element, status, results, redeliver.dialog);

  const hrefOf = (e: EventSummaryJson) => ctx.href({ endpointId: ep.id, eventId: e.id, eventTab: route.eventTab, query: route.query });

  function render(): void {
    const s = state;
    const focused = document.activeElement instanceof HTMLAnchorElement && tbody.contains(document.activeElement) ? document.activeElement.closest("tr")?.dataset.eventId : undefined;
    clear(
      status,
      h("span", {}, s.loaded ? `${plural(s.events.length, "event")} shown${s.older ? ", more older" : ""}` : "Loading…"),
      s.excluded ? h("span", { class: "hint", "data-testid": "excluded" }, `${plural(s.excluded, "metadata-only event")} not searched`) : null,
      h("span", { class: s.live ? "live on" : "live", "data-testid": "live", title: s.live ? "New captures appear as they arrive" : "Not following" }, s.live ? "live" : ""),
      h("span", { class: "spacer" }),
      s.events.length ? redeliver.button : null,
      s.events.length ? h("span", { class: "keys hint", "aria-hidden": "true" }, h("kbd", {}, "j"), " ", h("kbd", {}, "k"), " move · ", h("kbd", {}, "Enter"), " opens · ", h("kbd", {}, "/"), " searches") : null,
    );
    const rows = s.events.map((e) => {
      const row = eventRow(e, hrefOf(e), s.paths.get(e.id));
      if (e.id === route.eventId) row.classList.add("selected");
      if (e.id === cursor.id) row.classList.add("cursor");
      row.addEventListener("click", (ev) => {
        if (!(ev.target instanceof HTMLAnchorElement)) ctx.navigate({ endpointId: ep.id, eventId: e.id, eventTab: route.eventTab, query: route.query });
      });
      return row;
    });
    clear(tbody, ...rows);
    if (!s.loaded) return clear(results);
    if (!s.events.length) {
      return clear(
        results,
        anyFilter(s.filters)
          ? h("p", { class: "empty", "data-testid": "no-events" }, "No event matches these filters. ", h("a", { href: ctx.href({ endpointId: ep.id }) }, "Clear filters"))
          : firstRequest(ep),
      );
    }
    clear(
      results,
      h("div", { class: "table-scroll" }, table),
      s.older ? h("button", { type: "button", class: "btn", "data-testid": "older", onclick: () => void loadOlder(s) }, "Older events") : null,
    );
    if (focused) tbody.querySelector<HTMLAnchorElement>(`tr[data-event-id="${focused}"] a`)?.focus({ preventScroll: true });
  }

  async function follow(s: ListState, after: Cursor): Promise<void> {
    s.live = true;
    try {
      const captures = ctx.client.follow(ep.id, {
        after,
        filters: filterQuery(s.filters),
        signal: s.control.signal,
        onRetry: (err) => ctx.banner.show(err),
        // After each page of captures: one render, one refresh of the counts.
        onCursor: () => {
          s.paths.want(s.events);
          render();
          ctx.emit("captured", { endpointId: ep.id });
        },
      });
      for await (const e of captures) if (!s.events.some((known) => known.id === e.id)) s.events.unshift(e);
    } catch (err) {
      ctx.banner.show(err);
    } finally {
      if (!s.control.signal.aborted) {
        s.live = false;
        render();
      }
    }
  }

  async function load(filters: Filters, options: { keepForm?: boolean } = {}): Promise<void> {
    state?.control.abort();
    state?.paths.dispose();
    const s: ListState = { filters, events: [], loaded: false, live: false, control: new AbortController(), paths: createPathLoader(ctx.client, ep.id, filters, () => render()) };
    state = s;
    if (!options.keepForm) form.show(filters);
    render();
    const page = await ctx.banner.guarded(() => ctx.client.events.list(ep.id, { ...filterQuery(filters), limit: PAGE_SIZE }, s.control.signal));
    if (s.control.signal.aborted) return;
    s.loaded = true;
    if (page) {
      s.events = page.items;
      s.older = olderOf(page);
      s.excluded = page.searchExcludedMetadataOnlyCount;
      s.paths.want(s.events);
      void follow(s, cursorAfter(page));
    }
    render();
  }

  async function loadOlder(s: ListState): Promise<void> {
    const from = s.older;
    if (!from) return;
    const page = await ctx.banner.guarded(() => ctx.client.events.list(ep.id, { ...filterQuery(s.filters), limit: PAGE_SIZE, ...from }, s.control.signal));
    if (!page || s.control.signal.aborted) return;
    s.events = [...s.events, ...page.items];
    s.older = olderOf(page);
    s.paths.want(page.items);
    render();
  }

  const onKey = keyboard(() => tbody, form.search, () => route.eventId, cursor);
  document.addEventListener("keydown", onKey);
  const offs = [
    ctx.on("event-opened", (d) => {
      const e = state.events.find((known) => known.id === d.id);
      if (e) Object.assign(e, { readAt: d.readAt, forwardState: d.forwardState });
      render();
    }),
    ctx.on("event-deleted", ({ eventId }) => {
      state.events = state.events.filter((e) => e.id !== eventId);
      render();
    }),
  ];
  void load(filtersOf(route.query));

  return {
    element,
    update(next) {
      const changed = JSON.stringify(filterQuery(filtersOf(next.query))) !== JSON.stringify(filterQuery(state.filters));
      route = next;
      if (changed) void load(filtersOf(next.query));
      else render();
    },
    dispose() {
      state.control.abort();
      state.paths.dispose();
      document.removeEventListener("keydown", onKey);
      offs.forEach((off) => off());
    },
  };
}

export const eventsTab: EndpointTab = { segment: "events", label: "Events", withEvents: true, mount: mountEvents };
