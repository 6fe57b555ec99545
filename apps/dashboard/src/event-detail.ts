import type { EndpointJson, EventDetailJson } from "@whc/api-model";
import { copyButton } from "./copy.js";
import { likelyCauseTitle, readDiagnostic } from "./diagnosis.js";
import { clear, h } from "./dom.js";
import { statusClass } from "./event-row.js";
import { exactTime, relativeTime, size } from "./format.js";
import { replayDialog } from "./replay.js";
import { compareDialog } from "./compare.js";
import { EVENT_TABS } from "./routes.js";
import { formatRoute, type Route } from "./router.js";
import type { AppContext, EventTab, EventView, Mounted } from "./views.js";

function tabOf(route: Route): EventTab {
  return EVENT_TABS.find((t) => t.segment === route.eventTab) ?? EVENT_TABS[0]!;
}

/** A failed signature says so above the tabs, with its likely cause and a way to the diagnosis. */
function failedStrip(ctx: AppContext, v: EventView): HTMLElement | null {
  if (v.detail.verification !== "failed") return null;
  const cause = readDiagnostic(v.detail.diagnostic).signature?.likelyCause;
  return h(
    "p",
    { class: "alert", "data-testid": "failed-strip" },
    h("strong", {}, "Signature failed"),
    cause ? `: ${likelyCauseTitle(cause)}. ` : ". ",
    h("a", { href: ctx.href({ ...v.route, eventTab: "diagnosis" }) }, "See the diagnosis"),
  );
}

/** What was replaced before the event was stored (design §16): the counts, as a person reads them. */
function redactedPill(d: EventDetailJson): HTMLElement | null {
  const r = d.redactions;
  if (!r || r.headers + r.jsonPaths + r.patterns === 0) return null;
  const parts = [
    r.headers ? `${r.headers} header${r.headers === 1 ? "" : "s"}` : "",
    r.jsonPaths ? `${r.jsonPaths} JSON value${r.jsonPaths === 1 ? "" : "s"}` : "",
    r.patterns ? `${r.patterns} pattern match${r.patterns === 1 ? "" : "es"}` : "",
  ].filter(Boolean);
  return h(
    "span",
    { class: "pill warn", "data-testid": "redactions", title: "Replaced by [redacted] before storing: replays, forwards and exports send the redacted bytes." },
    `redacted: ${parts.join(", ")}`,
  );
}

/** A body that departs from what its endpoint learned of its type (design §19): how many changes, and the way to them. */
function driftPill(ctx: AppContext, v: EventView): HTMLElement | null {
  const drift = v.detail.schemaDrift;
  if (!drift?.length) return null;
  return h(
    "a",
    { class: "pill warn", href: ctx.href({ ...v.route, eventTab: "diagnosis" }), "data-testid": "drift-pill", title: "This body's shape departs from what was learned of its event type" },
    `schema drift: ${drift.length} change${drift.length === 1 ? "" : "s"}`,
  );
}

/** A retry the endpoint's deduplication recognised (design §17): stored and answered, not forwarded; links to the first. */
function duplicatePill(ctx: AppContext, v: EventView): HTMLElement | null {
  const first = v.detail.duplicateOf;
  if (!first) return null;
  return h(
    "a",
    { class: "pill warn", href: ctx.href({ endpointId: v.endpoint.id, eventId: first }), "data-testid": "duplicate-of", title: "A repeat of an earlier capture (same deduplication key within the window): stored, answered, not forwarded" },
    `duplicate of ${first.slice(0, 8)}`,
  );
}

function summary(ctx: AppContext, v: EventView, actions: HTMLElement): HTMLElement {
  const d = v.detail;
  return h(
    "header",
    { class: "event-head" },
    h(
      "div",
      { class: "title-row" },
      h("a", { class: "back", href: ctx.href({ endpointId: v.endpoint.id, query: v.route.query }), "data-testid": "back-events" }, "← Events"),
      h("h2", { class: "event-title" }, h("span", { class: "method" }, d.method), " ", h("span", { class: "mono path", "data-testid": "path", title: d.path || "the webhook URL itself" }, d.path || "/")),
    ),
    h(
      "div",
      { class: "chips" },
      h("span", { class: "chip mono", title: "event type" }, d.canonicalEventType ?? "no event type"),
      h("span", { class: `pill ${d.verification}`, "data-testid": "verification", title: d.verificationFailureReason ?? "" }, d.verification, d.verificationFailureReason ? ` (${d.verificationFailureReason})` : ""),
      h("span", { class: `status-code ${statusClass(d.responseCode)}`, title: "what the endpoint answered" }, String(d.responseCode)),
      h("span", { class: "chip" }, size(d.originalSizeBytes)),
      d.truncated ? h("span", { class: "pill warn", "data-testid": "truncated" }, "stored truncated") : null,
      redactedPill(d),
      driftPill(ctx, v),
      duplicatePill(ctx, v),
      d.forwardState ? h("span", { class: `pill forward ${d.forwardState}` }, `→ ${d.forwardState}`) : null,
    ),
    h(
      "p",
      { class: "meta" },
      h("time", { datetime: d.receivedAt, title: exactTime(d.receivedAt), "data-relative": d.receivedAt }, relativeTime(d.receivedAt)),
      h("span", { class: "mono" }, exactTime(d.receivedAt)),
      h("span", {}, `from ${d.remoteIp}`),
      h("span", {}, ctx.providers().find((p) => p.name === d.provider)?.label ?? d.provider),
    ),
    actions,
    failedStrip(ctx, v),
  );
}

function tabStrip(ctx: AppContext, v: EventView, active: EventTab): HTMLElement {
  return h(
    "nav",
    { class: "tabs", "aria-label": "Event views" },
    ...EVENT_TABS.map((t) =>
      h(
        "a",
        {
          href: ctx.href({ ...v.route, eventTab: t === EVENT_TABS[0] ? "" : t.segment }),
          class: t === active ? "tab active" : "tab",
          "aria-current": t === active ? "page" : undefined,
          "data-testid": `event-tab-${t.segment}`,
        },
        t.label(v.detail),
      ),
    ),
  );
}

/** Replay and compare (dialogs), copy the link, delete. */
function actions(ctx: AppContext, v: EventView): HTMLElement {
  const dialog = replayDialog(ctx, v.endpoint, v.detail.id);
  const replay = h("button", { type: "button", class: "btn primary small", "data-testid": "open-replay", onclick: () => dialog.showModal() }, "Replay…");
  const diff = compareDialog(ctx, v.endpoint, v.detail.id);
  const compare = h("button", { type: "button", class: "btn small", "data-testid": "open-diff", onclick: () => diff.showModal() }, "Compare…");
  const remove = h("button", { type: "button", class: "btn danger small", "data-testid": "delete-event" }, "Delete");
  remove.addEventListener("click", async () => {
    if (!confirm("Delete this event? Its body and headers are gone for good.")) return;
    const done = await ctx.banner.guarded(async () => (await ctx.client.events.delete(v.endpoint.id, v.detail.id), true));
    if (!done) return;
    ctx.emit("event-deleted", { endpointId: v.endpoint.id, eventId: v.detail.id });
    ctx.navigate({ endpointId: v.endpoint.id, query: v.route.query }, { replace: true });
  });
  return h("div", { class: "row actions" }, replay, compare, copyButton("Copy link", () => location.href, "copy-link", "Copy link to this event"), remove, dialog, diff);
}

/** The event pane: a summary with its actions, the event's tabs, and the tab shown. */
export function mountEventDetail(ctx: AppContext, endpoint: EndpointJson, first: Route): Mounted {
  const element = h("article", { class: "event-detail", "data-testid": "detail", "aria-busy": "true" }, h("p", { class: "hint" }, "Loading…"));
  let ep = endpoint;
  let route = first;
  let detail: EventDetailJson | undefined;
  let loading: string | undefined;
  const content = h("div", { class: "tab-body" });
  const strip = h("div");

  const view = (): EventView => ({ endpoint: ep, detail: detail!, route, reload: () => load(detail!.id) });

  function renderTab(): void {
    if (!detail) return;
    const tab = tabOf(route);
    clear(strip, tabStrip(ctx, view(), tab));
    clear(content, tab.render(ctx, view()));
  }

  function render(): void {
    if (!detail) return;
    clear(element, summary(ctx, view(), actions(ctx, view())), strip, content);
    renderTab();
  }

  async function load(eventId: string): Promise<void> {
    loading = eventId;
    element.setAttribute("aria-busy", "true");
    const d = await ctx.banner.guarded(() => ctx.client.events.get(ep.id, eventId));
    if (loading !== eventId) return;
    element.setAttribute("aria-busy", "false");
    if (!d) return void (detail || clear(element, h("p", { class: "empty" }, "This event could not be read.")));
    detail = d;
    // Which event the pane shows, once it shows it (the previous one stays until then).
    element.dataset.eventId = eventId;
    ctx.emit("event-opened", d);
    render();
  }

  const off = ctx.on("endpoint-updated", (updated) => {
    if (updated.id !== ep.id) return;
    ep = updated;
    render();
  });
  void load(first.eventId!);
  return {
    element,
    update(next) {
      const previous = route;
      route = next;
      if (next.eventId !== previous.eventId) void load(next.eventId!);
      else if (formatRoute(next) !== formatRoute(previous)) render();
    },
    dispose: off,
  };
}
