import "./styles.css";
import { api, ApiFailure, keyStore, type Endpoint, type EventDetail, type EventPage, type EventSummary } from "./api.js";
import { clear, h } from "./dom.js";
import { bytesOf, hexDump, prettyJson, size, time } from "./format.js";

const PROVIDERS = ["generic", "stripe", "github", "slack", "shopify", "standard_webhooks"];
const MASKED = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|signature|api-key|apikey|hmac/i;

interface Filters {
  search: string;
  status: string;
  eventType: string;
}

const state = {
  endpoints: [] as Endpoint[],
  selected: undefined as Endpoint | undefined,
  events: [] as EventSummary[],
  page: undefined as EventPage | undefined,
  filters: { search: "", status: "", eventType: "" } as Filters,
  detail: undefined as EventDetail | undefined,
  live: undefined as AbortController | undefined,
};

const root = document.getElementById("app")!;
const banner = h("div", { class: "banner", role: "alert", "data-testid": "error", hidden: true });
const endpointPane = h("section", { class: "pane endpoints", "data-testid": "endpoints" });
const eventPane = h("section", { class: "pane events", "data-testid": "events" });
const detailPane = h("section", { class: "pane detail", "data-testid": "detail" });

/** Every failure is shown as the reply's message and its request id. */
function showError(err: unknown): void {
  if (err instanceof DOMException && err.name === "AbortError") return;
  const text =
    err instanceof ApiFailure
      ? `${err.message}${err.requestId ? ` (request ${err.requestId})` : ""}`
      : `Cannot reach the service: ${(err as Error).message}`;
  banner.textContent = text;
  banner.hidden = false;
  if (err instanceof ApiFailure && err.code === "unauthorized") renderLogin();
}

function hideError(): void {
  banner.hidden = true;
}

async function guarded<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    const value = await work();
    hideError();
    return value;
  } catch (err) {
    showError(err);
    return undefined;
  }
}

async function copy(text: string, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy";
  }
  setTimeout(() => (button.textContent = button.dataset.label ?? "Copy"), 1500);
}

function copyButton(label: string, text: () => string, testid: string): HTMLButtonElement {
  const button = h("button", { type: "button", "data-testid": testid, "data-label": label }, label);
  button.addEventListener("click", () => void copy(text(), button));
  return button;
}

// ---------------------------------------------------------------- login

function renderLogin(): void {
  stopLive();
  const input = h("input", { type: "password", placeholder: "whc_…", "aria-label": "API key", "data-testid": "api-key", autocomplete: "off" });
  const form = h(
    "form",
    { class: "login" },
    h("h1", {}, "Webhook Capture"),
    h("p", {}, "Paste an API key. It is kept in this tab's session storage only, never in a URL."),
    input,
    h("button", { type: "submit", "data-testid": "use-key" }, "Use key"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!input.value.trim()) return;
    keyStore.set(input.value.trim());
    void start();
  });
  clear(root, banner, form);
}

// ---------------------------------------------------------------- endpoints

async function loadEndpoints(): Promise<void> {
  const res = await guarded(() => api<{ items: Endpoint[] }>("GET", "/endpoints"));
  if (!res) return;
  state.endpoints = res.items;
  if (state.selected) state.selected = state.endpoints.find((e) => e.id === state.selected!.id);
  renderEndpoints();
}

function renderEndpoints(): void {
  const slug = h("input", { name: "slug", placeholder: "slug (optional)", "data-testid": "new-slug" });
  const name = h("input", { name: "displayName", placeholder: "display name (optional)", "data-testid": "new-name" });
  const provider = h("select", { name: "provider", "data-testid": "new-provider" }, ...PROVIDERS.map((p) => h("option", { value: p }, p)));
  const secret = h("input", { name: "secret", type: "password", placeholder: "signing secret (optional)", "data-testid": "new-secret" });
  const form = h("form", { class: "create" }, h("h3", {}, "New endpoint"), slug, name, provider, secret, h("button", { type: "submit", "data-testid": "create-endpoint" }, "Create"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body: Record<string, string> = { provider: provider.value };
    if (slug.value) body.slug = slug.value;
    if (name.value) body.displayName = name.value;
    if (secret.value) body.secret = secret.value;
    const created = await guarded(() => api<Endpoint>("POST", "/endpoints", body));
    if (created) {
      await loadEndpoints();
      select(created.id);
    }
  });

  const list = h(
    "ul",
    { class: "list" },
    ...state.endpoints.map((ep) =>
      h(
        "li",
        { class: ep.id === state.selected?.id ? "selected" : "", "data-testid": `endpoint-${ep.slug}` },
        h("button", { type: "button", class: "link", onclick: () => select(ep.id) }, h("strong", {}, ep.displayName), h("small", {}, ` ${ep.slug} · ${ep.eventCount} events`)),
        h(
          "div",
          { class: "row" },
          h("code", { class: "url", "data-testid": "webhook-url" }, ep.webhookUrl),
          copyButton("Copy URL", () => ep.webhookUrl, "copy-url"),
          h("button", {
            type: "button",
            class: "danger",
            "data-testid": "delete-endpoint",
            onclick: async () => {
              if (!confirm(`Delete ${ep.slug} and all its events?`)) return;
              await guarded(() => api("DELETE", `/endpoints/${ep.id}`));
              if (state.selected?.id === ep.id) deselect();
              await loadEndpoints();
            },
          }, "Delete"),
        ),
      ),
    ),
  );
  clear(endpointPane, h("h2", {}, "Endpoints"), list, form);
}

function deselect(): void {
  stopLive();
  state.selected = undefined;
  state.detail = undefined;
  clear(eventPane);
  clear(detailPane);
}

function select(id: string): void {
  stopLive();
  state.selected = state.endpoints.find((e) => e.id === id);
  state.detail = undefined;
  state.events = [];
  clear(detailPane);
  renderEndpoints();
  void loadEvents();
}

// ---------------------------------------------------------------- events

function query(extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  if (state.filters.search.trim()) p.set("search", state.filters.search.trim());
  if (state.filters.status) p.set("status", state.filters.status);
  if (state.filters.eventType.trim()) p.set("eventType", state.filters.eventType.trim());
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

async function loadEvents(): Promise<void> {
  const ep = state.selected;
  if (!ep) return;
  const page = await guarded(() => api<EventPage>("GET", `/endpoints/${ep.id}/events${query({ limit: "50" })}`));
  if (!page || state.selected?.id !== ep.id) return;
  state.events = page.items;
  state.page = page;
  startLive(page.nextAfter, page.nextAfterId);
  renderEvents();
}

async function loadOlder(): Promise<void> {
  const ep = state.selected;
  const page = state.page;
  if (!ep || !page?.nextBefore || !page.nextBeforeId) return;
  const older = await guarded(() =>
    api<EventPage>("GET", `/endpoints/${ep.id}/events${query({ limit: "50", before: page.nextBefore!, beforeId: page.nextBeforeId! })}`),
  );
  if (!older) return;
  state.events = [...state.events, ...older.items];
  state.page = { ...page, nextBefore: older.nextBefore, nextBeforeId: older.nextBeforeId };
  renderEvents();
}

function stopLive(): void {
  state.live?.abort();
  state.live = undefined;
}

/** Follows new captures through long polls (`wait`) from the newest event shown. */
function startLive(after: string | undefined, afterId: string | undefined): void {
  stopLive();
  const ep = state.selected;
  if (!ep) return;
  const control = new AbortController();
  state.live = control;
  let cursor = after && afterId ? { after, afterId } : undefined;
  void (async () => {
    let backoff = 1000;
    while (!control.signal.aborted) {
      try {
        const page = await api<EventPage>(
          "GET",
          `/endpoints/${ep.id}/events${query({ wait: "25", limit: "200", ...(cursor ?? {}) })}`,
          undefined,
          { signal: control.signal },
        );
        if (control.signal.aborted) return;
        if (page.items.length) {
          const known = new Set(state.events.map((e) => e.id));
          state.events = [...page.items.filter((e) => !known.has(e.id)), ...state.events];
          if (state.page) state.page.searchExcludedMetadataOnlyCount = page.searchExcludedMetadataOnlyCount;
          renderEvents();
          void loadEndpoints();
        }
        if (page.nextAfter && page.nextAfterId) cursor = { after: page.nextAfter, afterId: page.nextAfterId };
        backoff = 1000;
      } catch (err) {
        if (control.signal.aborted) return;
        showError(err);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 15_000);
      }
    }
  })();
}

function badge(e: EventSummary): HTMLElement {
  return h("span", { class: `badge ${e.verification}`, title: e.verificationFailureReason ?? "" }, e.verification);
}

function renderEvents(): void {
  const ep = state.selected;
  if (!ep) return;
  const search = h("input", { type: "search", placeholder: "search bodies", value: state.filters.search, "data-testid": "search" });
  const status = h(
    "select",
    { "data-testid": "filter-status" },
    ...["", "verified", "failed", "unverified"].map((v) => h("option", { value: v, selected: v === state.filters.status }, v || "any verdict")),
  );
  const eventType = h("input", { placeholder: "event type", value: state.filters.eventType, "data-testid": "filter-type" });
  const filters = h("form", { class: "filters" }, search, status, eventType, h("button", { type: "submit", "data-testid": "apply-filters" }, "Apply"));
  filters.addEventListener("submit", (e) => {
    e.preventDefault();
    state.filters = { search: search.value, status: status.value, eventType: eventType.value };
    void loadEvents();
  });
  const excluded = state.page?.searchExcludedMetadataOnlyCount;
  const rows = state.events.map((e) =>
    h(
      "li",
      { class: e.id === state.detail?.id ? "selected" : "", "data-testid": "event-row", "data-event-id": e.id },
      h(
        "button",
        { type: "button", class: "link", onclick: () => void openEvent(e.id) },
        h("span", { class: "method" }, e.method),
        h("span", { class: "time" }, time(e.receivedAt)),
        h("span", { class: "type" }, e.canonicalEventType ?? "—"),
        badge(e),
        h("span", { class: "size" }, size(e.originalSizeBytes)),
        e.truncated ? h("span", { class: "badge warn" }, "truncated") : null,
        e.decryption !== "ok" ? h("span", { class: "badge warn" }, e.decryption) : null,
        e.readAt ? null : h("span", { class: "dot", title: "unread" }),
      ),
    ),
  );
  clear(
    eventPane,
    h("h2", {}, `${ep.displayName} `, h("span", { class: "live", "data-testid": "live" }, state.live ? "● live" : "")),
    h("p", { class: "hint" }, "Send webhooks to ", h("code", {}, ep.webhookUrl)),
    filters,
    excluded ? h("p", { class: "hint", "data-testid": "excluded" }, `${excluded} metadata-only event${excluded === 1 ? "" : "s"} not searched`) : null,
    rows.length ? h("ul", { class: "list events" }, ...rows) : h("p", { class: "empty", "data-testid": "no-events" }, "No events yet. Waiting for captures…"),
    state.page?.nextBefore ? h("button", { type: "button", "data-testid": "older", onclick: () => void loadOlder() }, "Older events") : null,
  );
}

// ---------------------------------------------------------------- detail

async function openEvent(id: string): Promise<void> {
  const ep = state.selected;
  if (!ep) return;
  const detail = await guarded(() => api<EventDetail>("GET", `/endpoints/${ep.id}/events/${id}`));
  if (!detail) return;
  state.detail = detail;
  const row = state.events.find((e) => e.id === id);
  if (row) row.readAt = detail.readAt;
  renderEvents();
  renderDetail("pretty");
}

function bodyView(detail: EventDetail, view: "pretty" | "raw" | "hex"): HTMLElement {
  if (detail.body === undefined) {
    return h("p", { class: "empty" }, detail.decryption === "metadata_only" ? "Metadata only: the body was not stored." : "The body cannot be decrypted.");
  }
  const bytes = bytesOf(detail.body, detail.bodyEncoding);
  let text: string;
  if (view === "hex" || (view === "pretty" && detail.bodyEncoding === "base64")) text = hexDump(bytes);
  else if (view === "pretty") text = prettyJson(detail.body) ?? detail.body;
  else text = detail.body;
  return h("pre", { class: "body", "data-testid": "body" }, text);
}

function renderDetail(view: "pretty" | "raw" | "hex"): void {
  const d = state.detail;
  const ep = state.selected;
  if (!d || !ep) return;
  const tabs = h(
    "div",
    { class: "tabs" },
    ...(["pretty", "raw", "hex"] as const).map((v) =>
      h("button", { type: "button", class: v === view ? "active" : "", "data-testid": `view-${v}`, onclick: () => renderDetail(v) }, v),
    ),
  );
  // Credentials stay hidden on screen until asked for, as in the cURL export.
  const secretCells: [HTMLElement, string][] = [];
  const headers = h(
    "table",
    { class: "headers", "data-testid": "headers" },
    ...Object.entries(d.headers).flatMap(([name, values]) =>
      values.map((v) => {
        const cell = h("td", {}, MASKED.test(name) ? "[MASKED]" : v);
        if (MASKED.test(name)) secretCells.push([cell, v]);
        return h("tr", {}, h("th", {}, name), cell);
      }),
    ),
  );
  const reveal = secretCells.length
    ? h("button", {
        type: "button",
        class: "link",
        "data-testid": "reveal-headers",
        onclick: () => secretCells.forEach(([cell, value]) => (cell.textContent = value)),
      }, "Show masked values")
    : null;

  // Copy as cURL
  const unmasked = h("input", { type: "checkbox", "data-testid": "curl-unmasked" });
  const curlOut = h("pre", { class: "curl", "data-testid": "curl-command" });
  const curlFlags = h("p", { class: "hint", "data-testid": "curl-flags" });
  const curlButton = h("button", { type: "button", "data-testid": "copy-curl" }, "Copy as cURL");
  curlButton.addEventListener("click", async () => {
    const res = await guarded(() =>
      api<{ command: string; byteIdentical: boolean; bodyOmitted: boolean; headersMasked: boolean }>(
        "GET",
        `/endpoints/${ep.id}/events/${d.id}/curl${unmasked.checked ? "?unmasked=true" : ""}`,
      ),
    );
    if (!res) return;
    curlOut.textContent = res.command;
    curlFlags.textContent = [
      res.headersMasked ? "secret headers masked" : "headers unmasked",
      res.bodyOmitted ? "body omitted" : res.byteIdentical ? "body byte-identical" : "body truncated",
    ].join(" · ");
    await copy(res.command, curlButton);
  });

  // Replay
  const replayAllowed = ep.replayFromDashboard;
  const target = h("input", { type: "url", placeholder: "https://example.com/webhooks", required: true, "data-testid": "replay-url", disabled: !replayAllowed });
  const mode = h("select", { "data-testid": "replay-mode", disabled: !replayAllowed }, h("option", { value: "" }, "mode: automatic"), h("option", { value: "exact" }, "exact"), h("option", { value: "resign" }, "resign"));
  const secret = h("input", { type: "password", placeholder: "target secret (re-sign)", "data-testid": "replay-secret", disabled: !replayAllowed });
  const outcome = h("div", { class: "outcome", "data-testid": "replay-outcome" });
  const replayForm = h(
    "form",
    { class: "replay" },
    h("h3", {}, "Replay"),
    replayAllowed ? null : h("p", { class: "hint", "data-testid": "replay-disabled" }, "Replay from the dashboard is disabled for this endpoint (replayFromDashboard is false)."),
    target,
    mode,
    secret,
    h("button", { type: "submit", "data-testid": "replay", disabled: !replayAllowed }, "Send"),
    outcome,
  );
  replayForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(outcome, "Sending…");
    const body: Record<string, string> = { target_url: target.value };
    if (mode.value) body.mode = mode.value;
    if (secret.value) body.target_secret = secret.value;
    const res = await guarded(() =>
      api<Record<string, any>>("POST", `/endpoints/${ep.id}/events/${d.id}/replay`, body, { headers: { "X-Whc-Client": "dashboard" } }),
    );
    if (!res) {
      clear(outcome, banner.textContent ?? "");
      return;
    }
    const excerpt = res.response_excerpt_base64 ? atob(res.response_excerpt_base64) : "";
    clear(
      outcome,
      h("p", {}, h("strong", {}, res.result), res.target_status ? ` · HTTP ${res.target_status}` : "", res.network_failure_reason ? ` · ${res.network_failure_reason}` : "", ` · ${res.duration_ms} ms · ${res.mode}`),
      excerpt ? h("pre", { class: "excerpt" }, excerpt, res.excerpt_truncated ? "\n…" : "") : null,
    );
  });

  clear(
    detailPane,
    h("h2", {}, `${d.method} · ${d.canonicalEventType ?? "event"}`),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Received"), h("dd", {}, time(d.receivedAt)),
      h("dt", {}, "From"), h("dd", {}, d.remoteIp),
      h("dt", {}, "Provider"), h("dd", {}, d.provider),
      h("dt", {}, "Verification"), h("dd", { "data-testid": "verification" }, d.verification, d.verificationFailureReason ? ` (${d.verificationFailureReason})` : ""),
      h("dt", {}, "Answered"), h("dd", {}, String(d.responseCode)),
      h("dt", {}, "Size"), h("dd", {}, size(d.originalSizeBytes), d.truncated ? h("span", { class: "badge warn", "data-testid": "truncated" }, " stored truncated") : ""),
    ),
    h("h3", {}, "Headers"),
    headers,
    reveal,
    h("h3", {}, "Body"),
    tabs,
    bodyView(d, view),
    h("div", { class: "row" }, curlButton, h("label", {}, unmasked, " unmasked")),
    curlFlags,
    curlOut,
    replayForm,
  );
}

// ---------------------------------------------------------------- start

async function start(): Promise<void> {
  if (!keyStore.get()) return renderLogin();
  const logout = h("button", { type: "button", class: "link", "data-testid": "forget-key", onclick: () => (keyStore.clear(), renderLogin()) }, "Forget key");
  clear(root, h("header", {}, h("h1", {}, "Webhook Capture"), logout), banner, h("main", {}, endpointPane, eventPane, detailPane));
  await loadEndpoints();
}

void start();
