import type { EndpointJson } from "@whc/api-model";
import { h } from "./dom.js";
import { exactTime, plural, relativeTime } from "./format.js";
import type { AppContext, Mounted } from "./views.js";

function row(ctx: AppContext, ep: EndpointJson): HTMLTableRowElement {
  const label = ctx.providers().find((p) => p.name === ep.provider)?.label ?? ep.provider;
  return h(
    "tr",
    { "data-testid": `overview-${ep.slug}` },
    h("td", {}, h("a", { href: ctx.href({ endpointId: ep.id }), class: "strong" }, ep.displayName), h("div", { class: "mono muted small" }, ep.slug)),
    h("td", {}, label),
    h("td", {}, ep.operatingMode.replace("_", " "), ep.forward && (ep.operatingMode === "relay" || ep.operatingMode === "proxy") ? h("div", { class: "mono muted small ellipsis", title: ep.forward.url }, `→ ${ep.forward.url}`) : null),
    h("td", { class: "num" }, plural(ep.eventCount, "event")),
    h("td", {}, ep.lastEventAt ? h("time", { datetime: ep.lastEventAt, title: exactTime(ep.lastEventAt), "data-relative": ep.lastEventAt }, relativeTime(ep.lastEventAt)) : h("span", { class: "muted" }, "never")),
    h("td", {}, h("span", { class: ep.status === "paused" ? "pill warn" : "pill verified" }, ep.status)),
  );
}

/** `#/` on a wide screen: every endpoint at a glance, beside the list. */
export function endpointOverview(ctx: AppContext): Mounted {
  const items = ctx.endpoints.items();
  if (!items.length) {
    return {
      element: h(
        "div",
        { class: "placeholder" },
        h("h2", {}, "Create your first endpoint"),
        h("p", {}, "An endpoint gives you a URL that captures every request sent to it: headers, body, signature verdict."),
        h("a", { class: "btn primary", href: ctx.href({ page: "new" }) }, "New endpoint"),
      ),
    };
  }
  const total = items.reduce((n, ep) => n + ep.eventCount, 0);
  return {
    element: h(
      "div",
      { class: "overview", "data-testid": "endpoint-overview" },
      h("div", { class: "pane-head" }, h("h2", {}, "All endpoints"), h("span", { class: "hint" }, `${plural(items.length, "endpoint")}, ${plural(total, "event")} kept`)),
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "overview-table" },
          h("caption", { class: "visually-hidden" }, "Endpoints"),
          h("thead", {}, h("tr", {}, ...["Endpoint", "Provider", "Mode", "Events", "Last capture", "Status"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, ...items.map((ep) => row(ctx, ep))),
        ),
      ),
    ),
  };
}
