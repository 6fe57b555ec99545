import { createApiClient, type ProviderInfoJson } from "@whc/api-model";
import { createBanner } from "./banner.js";
import { clear, h } from "./dom.js";
import { createEndpointStore } from "./endpoint-store.js";
import { createEndpointList } from "./endpoints.js";
import { relativeTime } from "./format.js";
import { keyStore } from "./key-store.js";
import { renderLogin } from "./login.js";
import { closeSession, openSession } from "./session.js";
import { logo } from "./logo.js";
import { createPanes } from "./panes.js";
import { formatRoute, parseRoute } from "./router.js";
import { PAGES } from "./routes.js";
import type { AppContext, AppEvents } from "./views.js";

/** Builds the context every view gets: the client, the banner, the endpoint list, the address, the events. */
type Context = AppContext & { setProviders(p: readonly ProviderInfoJson[]): void };

function createContext(onUnauthorized: () => void): Context {
  // The page's own origin: the gateway serves both the page and /v1.
  const client = createApiClient({ baseUrl: "", apiKey: () => keyStore.get() });
  const banner = createBanner(onUnauthorized);
  const bus = new EventTarget();
  let providers: readonly ProviderInfoJson[] = [];
  let loaded: (p: readonly ProviderInfoJson[]) => void = () => {};
  const providersLoaded = new Promise<readonly ProviderInfoJson[]>((resolve) => (loaded = resolve));
  const ctx: Context = {
    client,
    banner,
    endpoints: createEndpointStore(client, banner),
    providers: () => providers,
    providersLoaded: () => providersLoaded,
    setProviders(p) {
      providers = p;
      loaded(p);
    },
    href: (route) => formatRoute(route),
    navigate(route, options = {}) {
      const hash = formatRoute(route);
      if (hash === location.hash || (hash === "#/" && location.hash === "")) return;
      if (options.replace) history.replaceState(null, "", hash);
      else history.pushState(null, "", hash);
      dispatchEvent(new HashChangeEvent("hashchange"));
    },
    emit<K extends keyof AppEvents>(type: K, detail: AppEvents[K]) {
      bus.dispatchEvent(new CustomEvent(type, { detail }));
    },
    on<K extends keyof AppEvents>(type: K, listener: (detail: AppEvents[K]) => void) {
      const wrapped = (e: Event) => listener((e as CustomEvent<AppEvents[K]>).detail);
      bus.addEventListener(type, wrapped);
      return () => bus.removeEventListener(type, wrapped);
    },
  };
  return ctx;
}

/** The page: the key form until a key works, then the header and the panes, following the address. */
export function startApp(root: HTMLElement): void {
  let stopRouting: (() => void) | undefined;
  /** Counts the key forms shown: a start-up that met one (an unknown key) stops there. */
  let logins = 0;
  const ctx = createContext(() => showLogin());

  function showLogin(): void {
    logins += 1;
    stopRouting?.();
    stopRouting = undefined;
    renderLogin(root, ctx.banner, async (pasted) => {
      const before = logins;
      const session = await ctx.banner.guarded(() => openSession(pasted));
      // Refused (an unknown key shows the form again) or failed: the banner says why.
      if (!session || logins !== before) return;
      keyStore.set(session.key, session.id);
      void showApp();
    });
  }

  async function loadProviders(): Promise<void> {
    const res = await ctx.banner.guarded(() => ctx.client.providers.list());
    ctx.setProviders(res?.items ?? []);
  }

  async function signOut(): Promise<void> {
    const key = keyStore.get();
    const sessionId = keyStore.sessionKeyId();
    keyStore.clear();
    showLogin();
    if (key && sessionId) await closeSession(key, sessionId);
  }

  function header(): HTMLElement {
    const forget = h("button", { type: "button", class: "btn ghost", "data-testid": "forget-key", onclick: () => void signOut() }, "Sign out");
    return h(
      "header",
      { class: "topbar" },
      h("a", { class: "brand", href: "#/", "aria-label": "Webhook Capture: all endpoints" }, logo(), h("span", { class: "brand-name" }, "Webhook Capture")),
      h("span", { class: "spacer" }),
      ...PAGES.filter((p) => p.navLabel).map((p) => h("a", { class: "btn ghost small", href: `#/${p.segment}`, "data-testid": `nav-${p.segment}` }, p.navLabel!)),
      h("a", { class: "btn primary small", href: "#/new", "aria-label": "New endpoint", "data-testid": "new-endpoint" }, "New", h("span", { class: "hide-narrow" }, " endpoint")),
      forget,
    );
  }

  async function showApp(): Promise<void> {
    if (!keyStore.get()) return showLogin();
    // The list is the first call: an unknown key answers it, and the key form is shown once.
    // Unreachable or failing otherwise: the shell still comes, with the banner saying why.
    const before = logins;
    await ctx.endpoints.load();
    if (logins !== before) return;
    void loadProviders();
    const list = createEndpointList(ctx);
    const panes = createPanes(ctx, list);
    clear(root, h("a", { class: "skip", href: "#main-pane", onclick: (e) => (e.preventDefault(), panes.focusMain()) }, "Skip to content"), header(), ctx.banner.element, panes.element);
    const route = () => void panes.show(parseRoute(location.hash));
    addEventListener("hashchange", route);
    stopRouting = () => {
      removeEventListener("hashchange", route);
      panes.dispose();
      list.dispose();
    };
    route();
  }

  // "3 min ago" stays true while the page is open.
  setInterval(() => {
    for (const t of document.querySelectorAll<HTMLElement>("time[data-relative]")) t.textContent = relativeTime(t.dataset.relative!);
  }, 15_000);
  void showApp();
}
