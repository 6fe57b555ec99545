import type { EndpointJson } from "@whc/api-model";
import { copyButton } from "./copy.js";
import { clear, h } from "./dom.js";
import { ENDPOINT_TABS } from "./routes.js";
import type { Route } from "./router.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

/** Paused endpoints refuse captures (503); the switch PATCHes `status` and shows the answer. */
function statusSwitch(ctx: AppContext, ep: EndpointJson): HTMLElement {
  const toggle = h("input", { type: "checkbox", role: "switch", id: "status-switch", "data-testid": "status-switch", checked: ep.status === "active" });
  toggle.addEventListener("change", async () => {
    toggle.disabled = true;
    const updated = await ctx.banner.guarded(() => ctx.client.endpoints.update(ep.id, { status: toggle.checked ? "active" : "paused" }));
    toggle.disabled = false;
    if (!updated) return void (toggle.checked = !toggle.checked);
    ctx.endpoints.put(updated);
    ctx.emit("endpoint-updated", updated);
  });
  return h(
    "label",
    { class: `switch ${ep.status}`, for: "status-switch", title: ep.status === "paused" ? "Captures are refused with 503" : "Captures are accepted" },
    toggle,
    h("span", { "data-testid": "endpoint-status" }, ep.status),
  );
}

function providerLabel(ctx: AppContext, name: string): string {
  return ctx.providers().find((p) => p.name === name)?.label ?? name;
}

function heading(ctx: AppContext, ep: EndpointJson): HTMLElement {
  return h(
    "div",
    { class: "endpoint-head" },
    h(
      "div",
      { class: "title-row" },
      h("a", { class: "back", href: "#/", "data-testid": "back-endpoints" }, "← Endpoints"),
      h("h2", { class: "endpoint-title", "data-testid": "endpoint-title" }, ep.displayName),
      h("span", { class: "spacer" }),
      statusSwitch(ctx, ep),
    ),
    h(
      "div",
      { class: "chips" },
      h("span", { class: "chip mono", title: "slug" }, ep.slug),
      h("span", { class: "chip", title: "provider" }, providerLabel(ctx, ep.provider)),
      h("span", { class: "chip", title: "operating mode" }, ep.operatingMode.replace("_", " ")),
      ep.forward && (ep.operatingMode === "relay" || ep.operatingMode === "proxy") ? h("span", { class: "chip mono ellipsis", title: `forwards to ${ep.forward.url}` }, `→ ${ep.forward.url}`) : null,
      ep.secretSet ? h("span", { class: "chip", title: "a signing secret is set" }, "secret set") : null,
    ),
    h(
      "div",
      { class: "url-row" },
      h("code", { class: "url mono", "data-testid": "webhook-url", title: "This endpoint's webhook URL: any method, sub-path and query" }, ep.webhookUrl),
      copyButton("Copy URL", () => ep.webhookUrl, "copy-url", "Copy URL of the webhook"),
    ),
  );
}

function tabStrip(ctx: AppContext, ep: EndpointJson, active: EndpointTab, route: Route): HTMLElement {
  return h(
    "nav",
    { class: "tabs", "aria-label": "Endpoint views" },
    ...ENDPOINT_TABS.map((t) =>
      h(
        "a",
        {
          href: ctx.href({ endpointId: ep.id, tab: t === ENDPOINT_TABS[0] ? "" : t.segment, query: t.withEvents ? route.query : {} }),
          class: t === active ? "tab active" : "tab",
          "aria-current": t === active ? "page" : undefined,
          "data-testid": `tab-${t.segment}`,
        },
        t.label,
      ),
    ),
  );
}

/** The middle pane for one endpoint: its heading, URL and switch, its tabs, and the tab shown. */
export function mountEndpointView(ctx: AppContext, endpoint: EndpointJson, route: Route): Mounted {
  let ep = endpoint;
  let current = route;
  let tab = ENDPOINT_TABS.find((t) => t.segment === route.tab) ?? ENDPOINT_TABS[0]!;
  let content = tab.mount(ctx, ep, route);
  const head = h("div");
  const strip = h("div");
  const body = h("div", { class: "tab-body" }, content.element);
  const element = h("div", { class: "endpoint-view", "data-testid": "endpoint-view", "data-endpoint-id": ep.id }, head, strip, body);

  const renderHead = () => {
    clear(head, heading(ctx, ep));
    clear(strip, tabStrip(ctx, ep, tab, current));
  };
  renderHead();
  // The provider's label comes with GET /v1/providers, maybe after the first drawing.
  void ctx.providersLoaded().then(renderHead);
  const offUpdated = ctx.on("endpoint-updated", (updated) => {
    if (updated.id !== ep.id) return;
    ep = updated;
    renderHead();
  });

  return {
    element,
    update(next) {
      current = next;
      const wanted = ENDPOINT_TABS.find((t) => t.segment === next.tab) ?? ENDPOINT_TABS[0]!;
      if (wanted === tab) content.update?.(next);
      else {
        content.dispose?.();
        tab = wanted;
        content = tab.mount(ctx, ep, next);
        clear(body, content.element);
      }
      clear(strip, tabStrip(ctx, ep, tab, current));
    },
    dispose() {
      offUpdated();
      content.dispose?.();
    },
  };
}
