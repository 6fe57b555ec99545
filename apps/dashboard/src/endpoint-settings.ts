import type { EndpointJson, EndpointResponseConfig, RedactSettings, UpdateEndpointRequest } from "@whc/api-model";
import { clear, h } from "./dom.js";
import { exactTime, relativeTime } from "./format.js";
import { forwardFields, type ForwardFields } from "./forward-settings.js";
import { inboundFields, type InboundFields } from "./inbound-settings.js";
import { dedupeFields, type DedupeFields } from "./dedupe-settings.js";
import { fillProviders } from "./providers.js";
import { redactFields, type RedactFields } from "./redact-settings.js";
import type * as Checks from "./response-check.js";
import type { RedactCheck, ResponseCheck } from "./response-check.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

// The schemas come with zod; the chunk is fetched when the settings are first shown, not with the page.
let checker: Promise<typeof Checks> | undefined;
function loadChecker(): Promise<typeof Checks> {
  checker ??= import("./response-check.js").catch(
    (err: unknown) => {
      checker = undefined;
      throw err;
    },
  );
  return checker;
}

/** The textarea's text: empty means no configured answer. */
async function readResponse(text: string): Promise<ResponseCheck | { ok: true; value: null }> {
  if (!text.trim()) return { ok: true, value: null };
  return (await loadChecker()).checkResponse(text);
}

/** The redaction lists as typed: null when they redact nothing. */
async function readRedact(lists: RedactSettings): Promise<RedactCheck> {
  if (Object.keys(lists).length === 0) return { ok: true, value: null };
  return (await loadChecker()).checkRedact(lists);
}

/** JSON with object keys sorted, so that reordered keys do not count as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

function secretState(ep: EndpointJson): string {
  if (!ep.secretSet) return "no secret: signatures are not checked";
  return ep.secretRotatedAt ? `secret set, rotated ${relativeTime(ep.secretRotatedAt)} (${exactTime(ep.secretRotatedAt)})` : "secret set";
}

interface Fields {
  name: HTMLInputElement;
  provider: HTMLSelectElement;
  secret: HTMLInputElement;
  removeSecret: HTMLInputElement;
  signatureHeader: HTMLInputElement;
  replayFromDashboard: HTMLInputElement;
  replayFromApi: HTMLInputElement;
  response: HTMLTextAreaElement;
  forward: ForwardFields;
  redact: RedactFields;
  inbound: InboundFields;
  dedupe: DedupeFields;
}

/** Only what differs from `ep`: every field given replaces the stored one, and a response given restarts its sequence. */
function changes(ep: EndpointJson, f: Fields, response: EndpointResponseConfig | null, redact: RedactSettings | null): UpdateEndpointRequest {
  const changedResponse = canonical(response ?? undefined) !== canonical(ep.response);
  const changedRedact = canonical(redact ?? undefined) !== canonical(ep.redact);
  const header = f.signatureHeader.value.trim();
  return {
    ...(f.name.value !== ep.displayName ? { displayName: f.name.value } : {}),
    ...(f.provider.value && f.provider.value !== ep.provider ? { provider: f.provider.value } : {}),
    ...(f.secret.value ? { secret: f.secret.value } : f.removeSecret.checked ? { secret: null } : {}),
    ...(header && header !== (ep.genericSignatureHeader ?? "") ? { genericSignatureHeader: header } : {}),
    ...(f.replayFromDashboard.checked !== ep.replayFromDashboard ? { replayFromDashboard: f.replayFromDashboard.checked } : {}),
    ...(f.replayFromApi.checked !== ep.replayFromApi ? { replayFromApi: f.replayFromApi.checked } : {}),
    ...(changedResponse ? { response } : {}),
    ...(changedRedact ? { redact } : {}),
    ...f.forward.changes(ep),
    ...f.inbound.changes(ep),
    ...f.dedupe.changes(ep),
  };
}

function field(label: string, control: HTMLElement, hint?: string | HTMLElement): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, typeof hint === "string" ? h("span", { class: "hint" }, hint) : (hint ?? null));
}

function check(control: HTMLInputElement, text: string): HTMLElement {
  return h("label", { class: "check" }, control, h("span", {}, text));
}

function fieldsOf(ctx: AppContext, ep: EndpointJson): Fields {
  const provider = h("select", { name: "provider", "data-testid": "edit-provider" });
  const items = ctx.providers().length ? ctx.providers() : [{ name: ep.provider, label: ep.provider, signs: "", signatureHeaders: [], secretFormat: { description: "" }, sampleEventTypes: [] }];
  fillProviders(provider, items, ep.provider);
  void ctx.providersLoaded().then((loaded) => loaded.length && fillProviders(provider, loaded, provider.value || ep.provider));
  return {
    name: h("input", { name: "displayName", required: true, maxlength: "100", value: ep.displayName, "data-testid": "edit-name" }),
    provider,
    secret: h("input", { type: "password", autocomplete: "new-password", maxlength: "1024", placeholder: "new signing secret (rotates it)", "data-testid": "edit-secret" }),
    removeSecret: h("input", { type: "checkbox", "data-testid": "edit-remove-secret", disabled: !ep.secretSet }),
    signatureHeader: h("input", { maxlength: "100", placeholder: "e.g. X-Signature", value: ep.genericSignatureHeader ?? "", "data-testid": "edit-signature-header" }),
    replayFromDashboard: h("input", { type: "checkbox", checked: ep.replayFromDashboard, "data-testid": "edit-replay-dashboard" }),
    replayFromApi: h("input", { type: "checkbox", checked: ep.replayFromApi, "data-testid": "edit-replay-api" }),
    response: h(
      "textarea",
      { class: "json mono", rows: "8", spellcheck: "false", placeholder: '{"status": 202, "body": "ok"}', "data-testid": "edit-response" },
      ep.response ? JSON.stringify(ep.response, null, 2) : "",
    ),
    forward: forwardFields(ep),
    redact: redactFields(ep),
    inbound: inboundFields(ep),
    dedupe: dedupeFields(ep),
  };
}

function section(title: string, ...children: (HTMLElement | null)[]): HTMLElement {
  return h("fieldset", { class: "section" }, h("legend", {}, title), ...children);
}

function editForm(ctx: AppContext, ep: EndpointJson, save: (body: UpdateEndpointRequest) => Promise<void>, saved: boolean): HTMLFormElement {
  const f = fieldsOf(ctx, ep);
  const problem = h("p", { class: "problem", role: "alert", "data-testid": "response-problem", hidden: true });
  const outcome = h("span", { class: "hint", role: "status", "data-testid": "edit-outcome" }, saved ? "Saved." : "");
  const form = h(
    "form",
    { class: "edit form", "data-testid": "edit-endpoint", "aria-label": "Endpoint settings" },
    section(
      "General",
      field("Display name", f.name),
      field("Provider", f.provider, "Whose signature scheme verifies the captures."),
      field("Signing secret", f.secret, h("span", { class: "hint", "data-testid": "secret-state" }, secretState(ep), ". After a rotation the previous secret keeps verifying for a grace period.")),
      check(f.removeSecret, "Remove the secret"),
      field("Signature header (generic provider)", f.signatureHeader, "The header a generic sender signs in; masked like credentials."),
    ),
    section("Replay", check(f.replayFromDashboard, "Allow replay from the dashboard"), check(f.replayFromApi, "Allow replay from the API")),
    section(
      "Answer",
      field("Response", f.response, "What the endpoint answers (status, headers, body, delayMs, rules, sequence, handshakes), as JSON. Empty: 200 with the event id."),
      problem,
    ),
    section("Forwarding", f.forward.element),
    section("Deduplication", f.dedupe.element),
    section("Redaction", f.redact.element),
    section("Who may send", f.inbound.element),
    h("div", { class: "row form-actions" }, h("button", { type: "submit", class: "btn primary", "data-testid": "save-endpoint" }, "Save changes"), outcome),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    outcome.textContent = "";
    const notLoaded = (err: unknown) => ({ ok: false as const, problem: `the checker did not load (${(err as Error).message})` });
    const response = await readResponse(f.response.value).catch(notLoaded);
    problem.hidden = response.ok;
    if (!response.ok) return void (problem.textContent = `Response not saved: ${response.problem}`);
    const redact = await readRedact(f.redact.lists()).catch(notLoaded);
    f.redact.problem(redact.ok ? undefined : redact.problem);
    if (!redact.ok) return;
    const body = changes(ctx.endpoints.items().find((x) => x.id === ep.id) ?? ep, f, response.value, redact.value);
    if (Object.keys(body).length === 0) return void (outcome.textContent = "Nothing changed.");
    await save(body);
  });
  return form;
}

function dangerZone(ctx: AppContext, ep: EndpointJson): HTMLElement {
  const remove = h("button", { type: "button", class: "btn danger", "data-testid": "delete-endpoint" }, "Delete endpoint");
  remove.addEventListener("click", async () => {
    if (!confirm(`Delete ${ep.slug} and all its events?`)) return;
    const deleted = await ctx.banner.guarded(async () => (await ctx.client.endpoints.delete(ep.id), true));
    if (!deleted) return;
    ctx.endpoints.remove(ep.id);
    ctx.navigate({}, { replace: true });
  });
  return section("Danger zone", h("p", { class: "hint" }, "Deleting the endpoint deletes all its events; senders then get 404."), remove);
}

/** The endpoint's settings: name, provider, secret, replay, answer, forwarding, redaction, who may send; and delete. */
function mountSettings(ctx: AppContext, endpoint: EndpointJson): Mounted {
  const slot = h("div");
  const element = h("div", { class: "settings", "data-testid": "endpoint-settings" }, slot, dangerZone(ctx, endpoint));
  void loadChecker().catch(() => undefined);

  async function save(body: UpdateEndpointRequest): Promise<void> {
    const updated = await ctx.banner.guarded(() => ctx.client.endpoints.update(endpoint.id, body));
    if (!updated) return;
    ctx.endpoints.put(updated);
    ctx.emit("endpoint-updated", updated);
    // Refilled after its own save (secrets emptied, states new); not on other changes, not to lose typing.
    clear(slot, editForm(ctx, updated, save, true));
  }

  clear(slot, editForm(ctx, endpoint, save, false));
  return { element };
}

export const settingsTab: EndpointTab = { segment: "settings", label: "Settings", mount: mountSettings };
