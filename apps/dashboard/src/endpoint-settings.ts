import type { ApiClient, EndpointJson, EndpointResponseConfig, ProviderInfoJson, UpdateEndpointRequest } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { clear, h } from "./dom.js";
import { time } from "./format.js";
import { forwardFields, type ForwardFields } from "./forward-settings.js";
import { fillProviders } from "./providers.js";
import type { checkResponse, ResponseCheck } from "./response-check.js";

export interface EndpointSettings {
  readonly element: HTMLElement;
  /** Shows the switch and the edit form for `endpoint`, filled with its current values. */
  show(endpoint: EndpointJson): void;
  clear(): void;
  /** The providers the API knows, for the form's picker. */
  setProviders(items: readonly ProviderInfoJson[]): void;
}

interface Deps {
  client: ApiClient;
  banner: Banner;
  /** The endpoint as the API answered an update. */
  onUpdated(endpoint: EndpointJson): void;
}

// The schemas come with zod; the chunk is fetched when an endpoint is first shown, not with the page.
let checker: Promise<typeof checkResponse> | undefined;
function loadChecker(): Promise<typeof checkResponse> {
  checker ??= import("./response-check.js").then((m) => m.checkResponse, (err: unknown) => {
    checker = undefined;
    throw err;
  });
  return checker;
}

/** The textarea's text: empty means no configured answer. */
async function readResponse(text: string): Promise<ResponseCheck | { ok: true; value: null }> {
  if (!text.trim()) return { ok: true, value: null };
  return (await loadChecker())(text);
}

/** JSON with object keys sorted, so that reordered keys do not count as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

function secretState(ep: EndpointJson): string {
  if (!ep.secretSet) return "no secret: signatures are not checked";
  return ep.secretRotatedAt ? `secret set, rotated ${time(ep.secretRotatedAt)}` : "secret set";
}

type Update = (body: UpdateEndpointRequest) => Promise<boolean>;

/** Paused endpoints refuse captures (503); the switch PATCHes `status` and shows it. */
function statusSwitch(ep: EndpointJson, update: Update): HTMLElement {
  const toggle = h("input", { type: "checkbox", role: "switch", "data-testid": "status-switch", checked: ep.status === "active" });
  toggle.addEventListener("change", async () => {
    toggle.disabled = true;
    if (!(await update({ status: toggle.checked ? "active" : "paused" }))) toggle.checked = !toggle.checked;
    toggle.disabled = false;
  });
  return h(
    "label",
    { class: `switch ${ep.status}`, title: ep.status === "paused" ? "Captures are refused with 503" : "Captures are accepted" },
    toggle,
    h("span", { "data-testid": "endpoint-status" }, ep.status),
  );
}

interface Fields {
  name: HTMLInputElement;
  provider: HTMLSelectElement;
  secret: HTMLInputElement;
  removeSecret: HTMLInputElement;
  response: HTMLTextAreaElement;
  forward: ForwardFields;
}

/** Only what differs from `ep`: every field given replaces the stored one, and a response given restarts its sequence. */
function changes(ep: EndpointJson, f: Fields, response: EndpointResponseConfig | null): UpdateEndpointRequest {
  const changedResponse = canonical(response ?? undefined) !== canonical(ep.response);
  return {
    ...(f.name.value !== ep.displayName ? { displayName: f.name.value } : {}),
    ...(f.provider.value && f.provider.value !== ep.provider ? { provider: f.provider.value } : {}),
    ...(f.secret.value ? { secret: f.secret.value } : f.removeSecret.checked ? { secret: null } : {}),
    ...(changedResponse ? { response } : {}),
    ...f.forward.changes(ep),
  };
}

interface FormOptions {
  ep: EndpointJson;
  /** What a save is compared with: the switch may have changed the endpoint since the form was filled. */
  current(): EndpointJson;
  provider: HTMLSelectElement;
  update: Update;
  /** Open, saying it was saved: the form refilled after its own save. */
  saved: boolean;
}

function editForm({ ep, current, provider, update, saved }: FormOptions): HTMLElement {
  const f: Fields = {
    name: h("input", { name: "displayName", required: true, maxlength: "100", value: ep.displayName, "data-testid": "edit-name" }),
    provider,
    secret: h("input", { type: "password", autocomplete: "new-password", placeholder: "new signing secret (rotates it)", "data-testid": "edit-secret" }),
    removeSecret: h("input", { type: "checkbox", "data-testid": "edit-remove-secret", disabled: !ep.secretSet }),
    response: h(
      "textarea",
      { class: "json", rows: "8", spellcheck: "false", placeholder: '{"status": 202, "body": "ok"}', "data-testid": "edit-response" },
      ep.response ? JSON.stringify(ep.response, null, 2) : "",
    ),
    forward: forwardFields(ep),
  };
  const problem = h("p", { class: "problem", role: "alert", "data-testid": "response-problem", hidden: true });
  const outcome = h("span", { class: "hint", "data-testid": "edit-outcome" }, saved ? "Saved." : "");
  const form = h(
    "form",
    { class: "edit" },
    h("label", { class: "field" }, "Display name", f.name),
    h("label", { class: "field" }, "Provider", f.provider),
    h("label", { class: "field" }, "Signing secret", f.secret),
    h("p", { class: "hint", "data-testid": "secret-state" }, secretState(ep), ". After a rotation the previous secret keeps verifying for a grace period."),
    h("label", { class: "hint" }, f.removeSecret, " remove the secret"),
    f.forward.element,
    h(
      "label",
      { class: "field" },
      "Response",
      h("span", { class: "hint" }, "What the endpoint answers (status, headers, body, delayMs, rules, sequence, handshakes), as JSON. Empty: 200 with the event id."),
      f.response,
    ),
    problem,
    h("div", { class: "row" }, h("button", { type: "submit", "data-testid": "save-endpoint" }, "Save"), outcome),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    outcome.textContent = "";
    const response = await readResponse(f.response.value).catch((err: unknown) => ({ ok: false as const, problem: `the checker did not load (${(err as Error).message})` }));
    problem.hidden = response.ok;
    if (!response.ok) return void (problem.textContent = `Response not saved: ${response.problem}`);
    const body = changes(current(), f, response.value);
    if (Object.keys(body).length === 0) return void (outcome.textContent = "Nothing changed.");
    await update(body);
  });
  return h("details", { class: "settings-edit", "data-testid": "edit-endpoint", open: saved }, h("summary", { "data-testid": "edit-toggle" }, "Edit endpoint"), form);
}

/** The endpoint view's controls: pause or resume, and the edit form. */
export function createEndpointSettings({ client, banner, onUpdated }: Deps): EndpointSettings {
  const toggleSlot = h("div");
  const formSlot = h("div");
  const element = h("div", { class: "settings", "data-testid": "endpoint-settings" }, toggleSlot, formSlot);
  const provider = h("select", { name: "provider", "data-testid": "edit-provider" });
  let providers: readonly ProviderInfoJson[] = [];
  let shown: EndpointJson | undefined;

  /** PATCHes the shown endpoint; the switch always shows the answer, the form only after its own save (not to lose typing). */
  async function update(body: UpdateEndpointRequest, refillForm: boolean): Promise<boolean> {
    const ep = shown;
    if (!ep) return false;
    const updated = await banner.guarded(() => client.endpoints.update(ep.id, body));
    if (!updated) return false;
    // Another endpoint may have been selected while the call ran.
    if (shown?.id === updated.id) {
      shown = updated;
      renderSwitch(updated);
      if (refillForm) renderForm(updated, true);
    }
    onUpdated(updated);
    return true;
  }

  function renderSwitch(ep: EndpointJson): void {
    clear(toggleSlot, statusSwitch(ep, (body) => update(body, false)));
  }

  function renderForm(ep: EndpointJson, saved: boolean): void {
    // The current provider stays chosen even before the list came (or when it did not).
    const items = providers.length ? providers : [{ name: ep.provider, label: ep.provider, signs: "", signatureHeaders: [], secretFormat: { description: "" } }];
    fillProviders(provider, items, ep.provider);
    clear(formSlot, editForm({ ep, current: () => shown ?? ep, provider, update: (body) => update(body, true), saved }));
  }

  return {
    element,
    show(ep) {
      shown = ep;
      void loadChecker().catch(() => undefined);
      renderSwitch(ep);
      renderForm(ep, false);
    },
    clear() {
      shown = undefined;
      clear(toggleSlot);
      clear(formSlot);
    },
    setProviders(items) {
      providers = items;
      if (shown) fillProviders(provider, items, provider.value || shown.provider);
    },
  };
}
