import type { EndpointJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import { plural, relativeTime, exactTime } from "./format.js";
import type { AppContext } from "./views.js";

export interface EndpointList {
  readonly element: HTMLElement;
  /** Marks the endpoint the address shows (undefined: none). */
  select(id: string | undefined): void;
  dispose(): void;
}

function item(ctx: AppContext, ep: EndpointJson, selected: boolean): HTMLElement {
  return h(
    "li",
    { "data-testid": `endpoint-${ep.slug}`, class: selected ? "selected" : "" },
    h(
      "a",
      { class: "endpoint-link", href: ctx.href({ endpointId: ep.id }), "aria-current": selected ? "page" : undefined },
      h("span", { class: "endpoint-name" }, ep.displayName, ep.status === "paused" ? h("span", { class: "pill warn", "data-testid": "paused", title: "Captures are refused with 503" }, "paused") : null),
      h(
        "span",
        { class: "endpoint-meta" },
        h("span", { class: "mono" }, ep.slug),
        h("span", { "data-testid": "event-count" }, plural(ep.eventCount, "event")),
        ep.lastEventAt ? h("time", { datetime: ep.lastEventAt, title: exactTime(ep.lastEventAt), "data-relative": ep.lastEventAt }, relativeTime(ep.lastEventAt)) : null,
      ),
    ),
  );
}

/** The sidebar: every endpoint with its count and last capture, a filter when there are many. */
export function createEndpointList(ctx: AppContext): EndpointList {
  let selectedId: string | undefined;
  const filter = h("input", { type: "search", id: "endpoint-filter", placeholder: "Filter endpoints", "data-testid": "endpoint-filter", autocomplete: "off" });
  const list = h("ul", { class: "endpoint-list" });
  const count = h("span", { class: "count" });
  const element = h(
    "nav",
    { class: "endpoints", "aria-labelledby": "endpoints-title", "data-testid": "endpoints" },
    h("div", { class: "pane-head" }, h("h2", { id: "endpoints-title" }, "Endpoints ", count)),
    h("label", { class: "visually-hidden", for: "endpoint-filter" }, "Filter endpoints by name or slug"),
    filter,
    list,
  );

  function render(): void {
    const all = ctx.endpoints.items();
    const words = filter.value.trim().toLowerCase();
    const shown = words ? all.filter((ep) => `${ep.displayName} ${ep.slug}`.toLowerCase().includes(words)) : all;
    count.textContent = String(all.length);
    filter.hidden = all.length < 8 && !words;
    clear(
      list,
      ...shown.map((ep) => item(ctx, ep, ep.id === selectedId)),
      all.length && !shown.length ? h("li", { class: "empty" }, "No endpoint matches.") : null,
      all.length ? null : h("li", { class: "empty" }, "No endpoints yet."),
    );
  }

  filter.addEventListener("input", render);
  const unsubscribe = ctx.endpoints.subscribe(render);
  const offCaptured = ctx.on("captured", () => void ctx.endpoints.load());
  render();
  return {
    element,
    select(id) {
      if (id === selectedId) return;
      selectedId = id;
      render();
    },
    dispose() {
      unsubscribe();
      offCaptured();
    },
  };
}
