import { AUDIT_ACTIONS, type AuditEntryJson, type ListAuditQueryText } from "@whc/api-model";
import { clear, h } from "./dom.js";
import { exactTime, relativeTime } from "./format.js";
import { withQuery, type Route } from "./router.js";
import type { PageView } from "./views.js";

/** How far back the log is read (`since` in the address): hours; absent, all of it. */
const SINCE: [string, string, number][] = [
  ["", "Any time", 0],
  ["1h", "Last hour", 1],
  ["24h", "Last 24 hours", 24],
  ["7d", "Last 7 days", 168],
  ["30d", "Last 30 days", 720],
];

function queryOf(route: Route): ListAuditQueryText {
  const { action, endpoint, key, since } = route.query;
  const hours = SINCE.find(([value]) => value === since)?.[2] ?? 0;
  return {
    limit: "50",
    ...(action && (AUDIT_ACTIONS as readonly string[]).includes(action) ? { action: action as ListAuditQueryText["action"] } : {}),
    ...(endpoint ? { endpointId: endpoint } : {}),
    ...(key ? { keyId: key } : {}),
    ...(hours ? { from: new Date(Date.now() - hours * 3_600_000).toISOString() } : {}),
  };
}

function select(testid: string, label: string, options: [string, string][], value: string, onChange: (value: string) => void): HTMLElement {
  const el = h("select", { "data-testid": testid, "aria-label": label }, ...options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
  el.addEventListener("change", () => onChange(el.value));
  return el;
}

/** `#/audit`: who did what, newest first, filtered by the address (`?action=&endpoint=&key=&since=`), older pages on demand. */
export const auditPage: PageView = {
  segment: "audit",
  title: "Audit log",
  navLabel: "Audit",
  mount(ctx, initial) {
    let route = initial;
    let cursor: { before: string; beforeId: string } | undefined;
    let generation = 0;
    const filters = h("div", { class: "filters", role: "search", "aria-label": "Filter the audit log" });
    const tbody = h("tbody", {});
    const older = h("button", { type: "button", class: "btn", "data-testid": "audit-older" }, "Older entries");
    // A plain box: `.btn` sets its own display, which would show a hidden button.
    const more = h("div", { class: "more", hidden: true }, older);
    const element = h(
      "div",
      { class: "page wide" },
      h("div", { class: "pane-head" }, h("a", { class: "back", href: "#/" }, "← Endpoints"), h("h2", { id: "audit-title" }, "Audit log")),
      h("p", { class: "hint" }, "Reads of captured bodies, exports, replays, changes to endpoints and keys: who, when, from where. Lists are not recorded."),
      filters,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "audit-table", "aria-labelledby": "audit-title" },
          h("thead", {}, h("tr", {}, ...["When", "Action", "Key", "From", "Endpoint", "Event", "Details"].map((t) => h("th", { scope: "col" }, t)))),
          tbody,
        ),
      ),
      more,
    );

    const change = (name: string) => (value: string) => ctx.navigate({ page: "audit", query: withQuery(route.query, { [name]: value }) }, { replace: true });

    function renderFilters(keys: [string, string][]): void {
      const q = route.query;
      clear(
        filters,
        select("audit-action", "Action", [["", "Any action"], ...AUDIT_ACTIONS.map((a): [string, string] => [a, a])], q.action ?? "", change("action")),
        select("audit-endpoint", "Endpoint", [["", "Any endpoint"], ...ctx.endpoints.items().map((e): [string, string] => [e.id, e.slug])], q.endpoint ?? "", change("endpoint")),
        select("audit-key", "Key", [["", "Any key"], ...keys], q.key ?? "", change("key")),
        select("audit-since", "Since", SINCE.map(([v, text]): [string, string] => [v, text]), q.since ?? "", change("since")),
      );
    }

    function row(e: AuditEntryJson): HTMLElement {
      const ep = e.endpointId ? ctx.endpoints.items().find((x) => x.id === e.endpointId) : undefined;
      return h(
        "tr",
        { "data-testid": "audit-row", "data-action": e.action },
        h("td", {}, h("time", { datetime: e.at, title: exactTime(e.at), "data-relative": e.at }, relativeTime(e.at))),
        h("td", { class: "mono" }, e.action),
        h("td", { class: "mono", title: e.keyId }, `${e.keyPrefix}…`),
        h("td", { class: "mono" }, e.remoteIp),
        h("td", {}, e.endpointId ? h("a", { href: ctx.href({ endpointId: e.endpointId }) }, ep?.slug ?? e.endpointId.slice(0, 8)) : ""),
        h("td", { class: "mono" }, e.endpointId && e.eventId ? h("a", { href: ctx.href({ endpointId: e.endpointId, eventId: e.eventId }) }, e.eventId.slice(-12)) : ""),
        h("td", { class: "mono" }, Object.keys(e.details).length ? JSON.stringify(e.details) : ""),
      );
    }

    /** The first page (fresh) or the next older one (appended). */
    async function load(fresh: boolean): Promise<void> {
      const mine = fresh ? ++generation : generation;
      if (fresh) cursor = undefined;
      older.disabled = true;
      const page = await ctx.banner.guarded(() => ctx.client.audit.list({ ...queryOf(route), ...(cursor ?? {}) }));
      older.disabled = false;
      if (!page || mine !== generation) return;
      const rows = page.items.map(row);
      if (fresh) clear(tbody, ...rows, rows.length ? null : h("tr", {}, h("td", { colspan: "7", class: "empty" }, "No entries.")));
      else tbody.append(...rows);
      cursor = page.nextBefore && page.nextBeforeId ? { before: page.nextBefore, beforeId: page.nextBeforeId } : undefined;
      more.hidden = cursor === undefined;
    }

    let keys: [string, string][] = [];
    older.addEventListener("click", () => void load(false));
    renderFilters(keys);
    // The key filter names keys by name; a session that may not list keys filters by the others.
    void ctx.client.keys.list().then(
      (list) => {
        keys = list.items.map((k) => [k.id, `${k.name || "(unnamed)"} (${k.prefix}…)`]);
        renderFilters(keys);
      },
      () => undefined,
    );
    void load(true);
    // Endpoints made since the list was loaded can be chosen too.
    const unsubscribe = ctx.endpoints.subscribe(() => renderFilters(keys));
    void ctx.endpoints.load();
    return {
      element,
      dispose: unsubscribe,
      update(next) {
        route = next;
        renderFilters(keys);
        void load(true);
      },
    };
  },
};
