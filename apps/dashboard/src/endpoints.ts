import type { ApiClient, CreateEndpointRequest, EndpointJson, ProviderInfoJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { copyButton } from "./copy.js";
import { clear, h } from "./dom.js";
import { fillProviders } from "./providers.js";

export interface EndpointsPane {
  readonly element: HTMLElement;
  /** Fetches the list again (e.g. for new event counts); false when that failed. */
  load(): Promise<boolean>;
  /** Fills the create form's provider picker with the providers the API knows. */
  setProviders(items: readonly ProviderInfoJson[]): void;
  /** Marks the selected endpoint (undefined: none). */
  highlight(id: string | undefined): void;
}

interface Deps {
  client: ApiClient;
  banner: Banner;
  onSelect(endpoint: EndpointJson): void;
  onDeleted(id: string): void;
}

/** The endpoint list, each with its webhook URL and a delete button, and the create form. */
export function createEndpointsPane({ client, banner, onSelect, onDeleted }: Deps): EndpointsPane {
  let endpoints: EndpointJson[] = [];
  let selectedId: string | undefined;
  const list = h("ul", { class: "list" });
  const providers = h("select", { name: "provider", "data-testid": "new-provider" });
  const form = createForm(providers, async (body) => {
    const created = await banner.guarded(() => client.endpoints.create(body));
    if (!created) return false;
    await load();
    onSelect(created);
    return true;
  });
  const element = h("section", { class: "pane endpoints", "data-testid": "endpoints" }, h("h2", {}, "Endpoints"), list, form);

  async function remove(ep: EndpointJson): Promise<void> {
    if (!confirm(`Delete ${ep.slug} and all its events?`)) return;
    const deleted = await banner.guarded(async () => {
      await client.endpoints.delete(ep.id);
      return true;
    });
    if (deleted) onDeleted(ep.id);
    await load();
  }

  function row(ep: EndpointJson): HTMLElement {
    return h(
      "li",
      { class: ep.id === selectedId ? "selected" : "", "data-testid": `endpoint-${ep.slug}` },
      h(
        "button",
        { type: "button", class: "link", onclick: () => onSelect(ep) },
        h("strong", {}, ep.displayName),
        h("small", {}, ` ${ep.slug} · ${ep.eventCount} events `),
        ep.status === "paused" ? h("span", { class: "badge warn", "data-testid": "paused", title: "Captures are refused with 503" }, "paused") : null,
      ),
      h(
        "div",
        { class: "row" },
        h("code", { class: "url", "data-testid": "webhook-url" }, ep.webhookUrl),
        copyButton("Copy URL", () => ep.webhookUrl, "copy-url"),
        h("button", { type: "button", class: "danger", "data-testid": "delete-endpoint", onclick: () => void remove(ep) }, "Delete"),
      ),
    );
  }

  function render(): void {
    clear(list, ...endpoints.map(row));
  }

  async function load(): Promise<boolean> {
    const res = await banner.guarded(() => client.endpoints.list());
    if (!res) return false;
    endpoints = res.items;
    render();
    return true;
  }

  function setProviders(items: readonly ProviderInfoJson[]): void {
    fillProviders(providers, items);
  }

  function highlight(id: string | undefined): void {
    selectedId = id;
    render();
  }

  return { element, load, setProviders, highlight };
}

/** `submit` resolves true when the endpoint was created; the form is then emptied. */
function createForm(provider: HTMLSelectElement, submit: (body: CreateEndpointRequest) => Promise<boolean>): HTMLFormElement {
  const slug = h("input", { name: "slug", placeholder: "slug (optional)", "data-testid": "new-slug" });
  const name = h("input", { name: "displayName", placeholder: "display name (optional)", "data-testid": "new-name" });
  const secret = h("input", { name: "secret", type: "password", placeholder: "signing secret (optional)", "data-testid": "new-secret" });
  const form = h("form", { class: "create" }, h("h3", {}, "New endpoint"), slug, name, provider, secret, h("button", { type: "submit", "data-testid": "create-endpoint" }, "Create"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body: CreateEndpointRequest = {
      ...(provider.value ? { provider: provider.value } : {}),
      ...(slug.value ? { slug: slug.value } : {}),
      ...(name.value ? { displayName: name.value } : {}),
      ...(secret.value ? { secret: secret.value } : {}),
    };
    if (await submit(body)) form.reset();
  });
  return form;
}
