import { SCOPES, type ApiKeyJson, type CreateApiKeyRequest, type Scope } from "@whc/api-model";
import { copyButton } from "./copy.js";
import { clear, h } from "./dom.js";
import { exactTime, relativeTime } from "./format.js";
import { keyStore } from "./key-store.js";
import type { AppContext, PageView } from "./views.js";

/** What each scope lets a key do, as the form explains it (docs/api.md, "Keys and scopes"). */
const SCOPE_HINTS: Record<Scope, string> = {
  "endpoints:read": "list and read endpoints",
  "endpoints:write": "create, change and delete endpoints",
  "events:read": "list, read and export events; tail them",
  "events:write": "delete events, record delivery attempts",
  "events:replay": "replay, redeliver, trigger, fresh signatures",
  "keys:write": "manage keys within its own reach",
  "audit:read": "read the audit log",
  "alerts:write": "alert channels",
  dashboard: "a dashboard session: everything, replays follow replayFromDashboard",
  "*": "every scope",
};

/** The choices of the expiry select: days from now; 0 never. */
const EXPIRIES: [number, string][] = [
  [0, "Never"],
  [1, "In 1 day"],
  [7, "In 7 days"],
  [30, "In 30 days"],
  [90, "In 90 days"],
];

function stateOf(k: ApiKeyJson, now = Date.now()): "active" | "expired" | "revoked" {
  if (k.revokedAt) return "revoked";
  return k.expiresAt && Date.parse(k.expiresAt) <= now ? "expired" : "active";
}

function when(iso: string | null, none: string): HTMLElement | string {
  return iso ? h("time", { datetime: iso, title: exactTime(iso), "data-relative": iso }, relativeTime(iso)) : none;
}

/** `#/keys`: the keys within this session's reach; create one (shown once), revoke one. */
export const keysPage: PageView = {
  segment: "keys",
  title: "API keys",
  navLabel: "Keys",
  mount(ctx) {
    const tbody = h("tbody", {});
    const form = createForm(ctx, (key) => {
      clear(
        created,
        h("p", {}, h("strong", {}, `Key "${key.name}" created. `), "Copy it now: it is shown this once, and only its first characters afterwards."),
        h("div", { class: "row" }, h("code", { class: "mono", "data-testid": "created-key-value" }, key.key), copyButton("Copy", () => key.key, "copy-created-key", "Copy the new key")),
      );
      created.hidden = false;
      void load();
    });
    const created = h("div", { class: "card secret-once", hidden: true, "data-testid": "created-key", role: "status" });
    const element = h(
      "div",
      { class: "page wide" },
      h("div", { class: "pane-head" }, h("a", { class: "back", href: "#/" }, "← Endpoints"), h("h2", { id: "keys-title" }, "API keys")),
      created,
      form.element,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "keys-table", "aria-labelledby": "keys-title" },
          h("thead", {}, h("tr", {}, ...["Name", "Prefix", "Scopes", "Endpoints", "Created", "Last used", "Expires", "State", ""].map((t) => h("th", { scope: "col" }, t)))),
          tbody,
        ),
      ),
    );

    function row(k: ApiKeyJson): HTMLElement {
      const state = stateOf(k);
      const mine = k.id === keyStore.sessionKeyId();
      const slugs = k.endpointIds.map((id) => ctx.endpoints.items().find((e) => e.id === id)?.slug ?? id.slice(0, 8));
      const revoke =
        state === "active"
          ? h("button", { type: "button", class: "btn small danger", "data-testid": "revoke-key", "aria-label": `Revoke ${k.name}` }, "Revoke")
          : null;
      revoke?.addEventListener("click", async () => {
        if (!confirm(mine ? "Revoke the key of this session? You will be signed out." : `Revoke "${k.name}"? It stops working at once.`)) return;
        revoke.disabled = true;
        await ctx.banner.guarded(() => ctx.client.keys.revoke(k.id));
        // The session's own key: the list's call is then refused, and the key form shows.
        void load();
      });
      return h(
        "tr",
        { "data-testid": "key-row", "data-key-id": k.id, "data-state": state },
        h("td", {}, k.name || "(unnamed)", mine ? h("span", { class: "pill small", title: "The key this tab uses" }, "this session") : null),
        h("td", { class: "mono" }, `${k.prefix}…`),
        h("td", {}, k.scopes.join(", ")),
        h("td", {}, slugs.length ? slugs.join(", ") : "all"),
        h("td", {}, when(k.createdAt, "")),
        h("td", {}, when(k.lastUsedAt, "never")),
        h("td", {}, when(k.expiresAt, "never")),
        h("td", {}, h("span", { class: `pill small ${state === "active" ? "verified" : "warn"}` }, state)),
        h("td", {}, revoke),
      );
    }

    async function load(): Promise<void> {
      const list = await ctx.banner.guarded(() => ctx.client.keys.list());
      if (!list) return;
      clear(tbody, ...[...list.items].reverse().map(row), list.items.length ? null : h("tr", {}, h("td", { colspan: "9", class: "empty" }, "No keys.")));
    }

    void load();
    // Endpoints made since the list was loaded can be chosen too.
    void ctx.endpoints.load();
    return { element, dispose: form.dispose };
  },
};

/** The new key's name, scopes, endpoints and expiry; `onCreated` gets the answer (with the key). */
function createForm(ctx: AppContext, onCreated: (key: ApiKeyJson & { key: string }) => void): { element: HTMLElement; dispose(): void } {
  const name = h("input", { name: "name", required: true, maxlength: "100", autocomplete: "off", placeholder: "e.g. ci-read-stripe", "data-testid": "key-name" });
  const scopes = SCOPES.map((scope) => ({ scope, box: h("input", { type: "checkbox", value: scope, "data-testid": `key-scope-${scope}` }) }));
  const endpointBoxes = h("div", { class: "checks-grid", "data-testid": "key-endpoints" });
  const fillEndpoints = () => {
    const ticked = new Set([...endpointBoxes.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value));
    clear(
      endpointBoxes,
      ...ctx.endpoints
        .items()
        .map((ep) => h("label", { class: "check" }, h("input", { type: "checkbox", value: ep.id, checked: ticked.has(ep.id), "data-testid": `key-endpoint-${ep.slug}` }), ep.slug)),
    );
  };
  fillEndpoints();
  const unsubscribe = ctx.endpoints.subscribe(fillEndpoints);
  const expires = h("select", { name: "expires", "data-testid": "key-expires" }, ...EXPIRIES.map(([days, label]) => h("option", { value: String(days) }, label)));
  const submit = h("button", { type: "submit", class: "btn primary", "data-testid": "create-key" }, "Create key");
  const form = h(
    "form",
    { class: "card form", "aria-label": "New API key" },
    h("h3", {}, "New key"),
    h("label", { class: "field" }, h("span", { class: "label" }, "Name"), name),
    h(
      "fieldset",
      { class: "field" },
      h("legend", { class: "label" }, "Scopes"),
      h("div", { class: "checks-grid" }, ...scopes.map(({ scope, box }) => h("label", { class: "check", title: SCOPE_HINTS[scope] }, box, h("span", {}, scope, h("span", { class: "hint" }, ` ${SCOPE_HINTS[scope]}`))))),
    ),
    h("fieldset", { class: "field" }, h("legend", { class: "label" }, "Only these endpoints"), endpointBoxes, h("span", { class: "hint" }, "None ticked: every endpoint of the account.")),
    h("label", { class: "field" }, h("span", { class: "label" }, "Expires"), expires),
    h("div", { class: "row" }, submit),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const days = Number(expires.value);
    const endpointIds = [...endpointBoxes.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value);
    const body: CreateApiKeyRequest = {
      name: name.value.trim(),
      scopes: scopes.filter(({ box }) => box.checked).map(({ scope }) => scope),
      ...(endpointIds.length ? { endpointIds } : {}),
      ...(days > 0 ? { expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
    };
    submit.disabled = true;
    const created = await ctx.banner.guarded(() => ctx.client.keys.create(body));
    submit.disabled = false;
    if (!created) return;
    form.reset();
    fillEndpoints();
    onCreated(created);
  });
  return { element: form, dispose: unsubscribe };
}
