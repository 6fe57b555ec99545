import { createApiClient, type EndpointJson, type ProviderInfoJson } from "@whc/api-model";
import { createBanner } from "./banner.js";
import { clear, h } from "./dom.js";
import { createEndpointSettings } from "./endpoint-settings.js";
import { createEndpointsPane } from "./endpoints.js";
import { createDetailPane } from "./event-detail.js";
import { createEventsPane } from "./events-list.js";
import { keyStore } from "./key-store.js";
import { renderLogin } from "./login.js";

/** Wires the panes: selecting an endpoint shows its events, opening an event shows its detail. */
export function startApp(root: HTMLElement): void {
  // The page's own origin: the gateway serves both the page and /v1.
  const client = createApiClient({ baseUrl: "", apiKey: () => keyStore.get() });
  const banner = createBanner(() => showLogin());
  let providers: readonly ProviderInfoJson[] = [];
  const detail = createDetailPane({
    client,
    banner,
    onOpened: (d) => events.opened(d),
    providerLabel: (name) => providers.find((p) => p.name === name)?.label,
  });
  const settings = createEndpointSettings({
    client,
    banner,
    onUpdated: (ep) => {
      events.refresh(ep);
      void endpoints.load();
    },
  });
  const events = createEventsPane({
    client,
    banner,
    settings: settings.element,
    onOpen: (ep, id) => void detail.open(ep, id),
    onCaptured: () => void endpoints.load(),
  });
  const endpoints = createEndpointsPane({
    client,
    banner,
    onSelect: select,
    onDeleted: (id) => {
      if (id === selected) deselect();
    },
  });
  let selected: string | undefined;

  function select(ep: EndpointJson): void {
    selected = ep.id;
    endpoints.highlight(ep.id);
    detail.clear();
    settings.show(ep);
    events.show(ep);
  }

  function deselect(): void {
    selected = undefined;
    endpoints.highlight(undefined);
    events.leave();
    settings.clear();
    detail.clear();
  }

  function showLogin(): void {
    deselect();
    renderLogin(root, banner, (key) => {
      keyStore.set(key);
      void showApp();
    });
  }

  /** One list for both pickers (the create form's and the edit form's) and the diagnosis's labels. */
  async function loadProviders(): Promise<void> {
    const res = await banner.guarded(() => client.providers.list());
    if (!res) return;
    providers = res.items;
    endpoints.setProviders(res.items);
    settings.setProviders(res.items);
  }

  async function showApp(): Promise<void> {
    if (!keyStore.get()) return showLogin();
    const forget = h("button", { type: "button", class: "link", "data-testid": "forget-key", onclick: () => (keyStore.clear(), showLogin()) }, "Forget key");
    clear(root, h("header", {}, h("h1", {}, "Webhook Capture"), forget), banner.element, h("main", {}, endpoints.element, events.element, detail.element));
    // One call at a time: an unknown key answers the first, and the login form is shown once.
    if (await endpoints.load()) await loadProviders();
  }

  void showApp();
}
