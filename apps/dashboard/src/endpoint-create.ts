import type { CreateEndpointRequest } from "@whc/api-model";
import { h } from "./dom.js";
import { fillProviders } from "./providers.js";
import type { PageView } from "./views.js";

function field(label: string, input: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), input, hint ? h("span", { class: "hint" }, hint) : null);
}

/** `#/new`: a new endpoint; the rest (answers, forwarding) is in its settings once it exists. */
export const createEndpointPage: PageView = {
  segment: "new",
  title: "New endpoint",
  mount(ctx) {
    const slug = h("input", { name: "slug", pattern: "[a-z0-9][a-z0-9_-]{0,63}", maxlength: "64", autocomplete: "off", placeholder: "e.g. stripe-live", "data-testid": "new-slug" });
    const name = h("input", { name: "displayName", maxlength: "100", autocomplete: "off", placeholder: "e.g. Stripe (live)", "data-testid": "new-name" });
    const provider = h("select", { name: "provider", "data-testid": "new-provider" });
    const secret = h("input", { name: "secret", type: "password", autocomplete: "new-password", maxlength: "1024", "data-testid": "new-secret" });
    const fill = () => fillProviders(provider, ctx.providers().length ? ctx.providers() : [{ name: "generic", label: "Generic", signs: "", signatureHeaders: [], secretFormat: { description: "" }, sampleEventTypes: [] }], provider.value || "generic");
    fill();
    // The providers may still be on their way when the page opens from a link.
    void ctx.providersLoaded().then(fill);
    const submit = h("button", { type: "submit", class: "btn primary", "data-testid": "create-endpoint" }, "Create endpoint");
    const form = h(
      "form",
      { class: "card form", "aria-labelledby": "new-title" },
      field("Slug", slug, "Lower-case letters, digits, - and _; it names the endpoint in the CLI. Empty: a random one."),
      field("Display name", name, "Empty: the slug."),
      field("Provider", provider, "Whose signatures to verify. Generic: none unless you set a header below later."),
      field("Signing secret", secret, "Optional. The provider's webhook secret; it can be rotated later."),
      h("div", { class: "row" }, submit, h("a", { class: "btn ghost", href: "#/" }, "Cancel")),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body: CreateEndpointRequest = {
        ...(provider.value ? { provider: provider.value } : {}),
        ...(slug.value ? { slug: slug.value } : {}),
        ...(name.value ? { displayName: name.value } : {}),
        ...(secret.value ? { secret: secret.value } : {}),
      };
      submit.disabled = true;
      const created = await ctx.banner.guarded(() => ctx.client.endpoints.create(body));
      submit.disabled = false;
      if (!created) return;
      ctx.endpoints.put(created);
      ctx.navigate({ endpointId: created.id }, { replace: true });
    });
    return {
      element: h("div", { class: "page" }, h("div", { class: "pane-head" }, h("a", { class: "back", href: "#/" }, "← Endpoints"), h("h2", { id: "new-title" }, "New endpoint")), form),
    };
  },
};
