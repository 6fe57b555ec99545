import type { EndpointJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import type { EndpointList } from "./endpoints.js";
import { mountEndpointView } from "./endpoint-view.js";
import { endpointOverview } from "./endpoint-overview.js";
import { mountEventDetail } from "./event-detail.js";
import { PAGES } from "./routes.js";
import type { Route } from "./router.js";
import type { AppContext, Mounted } from "./views.js";

export interface Panes {
  readonly element: HTMLElement;
  show(route: Route): Promise<void>;
  focusMain(): void;
  dispose(): void;
}

/** A pane's current view, kept while the routes shown map to the same key. */
interface Slot {
  key: string;
  mounted: Mounted;
}

function placeholder(title: string, text: string, ...extra: HTMLElement[]): Mounted {
  return { element: h("div", { class: "placeholder" }, h("h2", {}, title), h("p", {}, text), ...extra) };
}

function noEvent(): Mounted {
  return placeholder("No event open", "Choose an event in the list: j and k move, Enter opens, / searches.");
}

/**
 * The three panes: endpoints, the endpoint (or a page), the event. How many show is the
 * stylesheet's business (three wide, two medium, one narrow); the pane here says how deep the
 * address is (`data-depth`: 0 the list, 1 an endpoint or page, 2 an event) and whether the
 * middle view takes the event pane's width too (`data-span`).
 */
export function createPanes(ctx: AppContext, list: EndpointList): Panes {
  const sidebar = h("aside", { class: "pane sidebar", "aria-label": "Endpoints" }, list.element);
  const main = h("section", { class: "pane main", id: "main-pane", tabindex: "-1", "aria-label": "Endpoint" });
  const detail = h("section", { class: "pane detail", tabindex: "-1", "aria-label": "Event" });
  const element = h("div", { class: "layout", "data-depth": "0", "data-span": "true" }, sidebar, main, detail);
  let mainSlot: Slot | undefined;
  let detailSlot: Slot | undefined;
  let shown = 0;

  function put(pane: HTMLElement, slot: Slot | undefined, key: string, route: Route, make: () => Mounted): Slot {
    if (slot?.key === key) {
      slot.mounted.update?.(route);
      return slot;
    }
    slot?.mounted.dispose?.();
    const mounted = make();
    clear(pane, mounted.element);
    return { key, mounted };
  }

  function layout(depth: number, span: boolean): void {
    const deeper = Number(element.dataset.depth) !== depth;
    element.dataset.depth = String(depth);
    element.dataset.span = String(span);
    // One pane at a time on a phone: the one just opened takes the focus, as a new page would.
    if (deeper) ([sidebar, main, detail][depth] as HTMLElement).focus({ preventScroll: true });
  }

  function showEndpoint(ep: EndpointJson, route: Route): void {
    mainSlot = put(main, mainSlot, `endpoint:${ep.id}`, route, () => mountEndpointView(ctx, ep, route));
    if (route.eventId) detailSlot = put(detail, detailSlot, `event:${ep.id}`, route, () => mountEventDetail(ctx, ep, route));
    else detailSlot = put(detail, detailSlot, "none", route, noEvent);
    // No event open: the endpoint's view takes the event pane's width too (a denser list).
    layout(route.eventId ? 2 : 1, !route.eventId);
  }

  async function show(route: Route): Promise<void> {
    const mine = ++shown;
    list.select(route.endpointId);
    if (route.endpointId) {
      const ep = await ctx.endpoints.get(route.endpointId);
      if (mine !== shown) return;
      if (ep) return showEndpoint(ep, route);
      mainSlot = put(main, mainSlot, `missing:${route.endpointId}`, route, () =>
        placeholder("Endpoint not found", "It was deleted, or the key you entered belongs to another account.", h("a", { href: "#/" }, "All endpoints")),
      );
    } else if (route.page) {
      const page = PAGES.find((p) => p.segment === route.page);
      mainSlot = put(main, mainSlot, `page:${route.page}`, route, () =>
        page ? page.mount(ctx, route) : placeholder("Nothing here", "This address names no view of the dashboard.", h("a", { href: "#/" }, "All endpoints")),
      );
    } else {
      // Drawn again for each visit: the counts move.
      mainSlot = put(main, mainSlot, `home:${Date.now()}`, route, () => endpointOverview(ctx));
    }
    detailSlot = put(detail, detailSlot, "none", route, noEvent);
    layout(route.endpointId || route.page ? 1 : 0, true);
  }

  return {
    element,
    show,
    focusMain: () => main.focus(),
    dispose() {
      mainSlot?.mounted.dispose?.();
      detailSlot?.mounted.dispose?.();
    },
  };
}
