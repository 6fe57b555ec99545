import {
  ALERT_CHANNEL_TYPES,
  ALERT_EVENTS,
  type AlertChannelJson,
  type AlertChannelType,
  type AlertDeliveryJson,
  type AlertEvent,
  type CreateAlertChannelRequest,
  type CreatedAlertChannelJson,
} from "@whc/api-model";
import { copyButton } from "./copy.js";
import { clear, h } from "./dom.js";
import { exactTime, relativeTime } from "./format.js";
import type { AppContext, PageView } from "./views.js";

/** What each alert tells, as the form explains it (docs/api.md, "Alert channels"). */
const EVENT_HINTS: Record<AlertEvent, string> = {
  "delivery.exhausted": "a relay delivery used all its attempts",
  "delivery.failed": "a destination refused a delivery, or a proxy's failed",
  "signature.failed": "a capture's signature did not verify",
  "listener.stalled": "a whc listen stopped keeping up",
  "destination.opened": "a destination's breaker opened (coming)",
  "destination.closed": "a destination's breaker closed (coming)",
  "schema.drift": "a capture's shape changed (coming)",
  test: "the Test button sends one whatever is ticked",
};

/** How long the Test button follows its alert before saying it is still on its way. */
const TEST_WAIT_MS = 30_000;

function when(iso: string): HTMLElement {
  return h("time", { datetime: iso, title: exactTime(iso), "data-relative": iso }, relativeTime(iso));
}

/** The URL as the table shows it: its origin (a Slack webhook's path is its credential), the whole in the title. */
function shownUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function lastDelivery(d: AlertDeliveryJson | null): HTMLElement | string {
  if (!d) return "none yet";
  const tone = d.state === "delivered" ? "verified" : d.state === "pending" ? "" : "warn";
  const answer = d.status ? ` ${d.status}` : d.error ? ` ${d.error}` : "";
  return h("span", {}, h("span", { class: `pill small ${tone}`, "data-testid": "alert-last-state" }, `${d.state}${answer}`), " ", d.type, " ", when(d.at));
}

/** `#/alerts`: the account's alert channels; create one (a webhook channel's secret shown once), test one, delete one. */
export const alertsPage: PageView = {
  segment: "alerts",
  title: "Alert channels",
  navLabel: "Alerts",
  mount(ctx) {
    const control = new AbortController();
    const tbody = h("tbody", {});
    const created = h("div", { class: "card secret-once", hidden: true, "data-testid": "created-channel", role: "status" });
    const form = createForm(ctx, (channel) => {
      clear(
        created,
        h("p", {}, h("strong", {}, `Channel "${channel.name}" created.`), channel.secret ? " Copy its signing secret now: it is shown this once." : ""),
        channel.secret
          ? h("div", { class: "row" }, h("code", { class: "mono", "data-testid": "created-channel-secret" }, channel.secret), copyButton("Copy", () => channel.secret!, "copy-channel-secret", "Copy the secret"))
          : null,
        ...(channel.warnings ?? []).map((w) => h("p", { class: "hint" }, w.message)),
      );
      created.hidden = false;
      void load();
    });
    const element = h(
      "div",
      { class: "page wide" },
      h("div", { class: "pane-head" }, h("a", { class: "back", href: "#/" }, "← Endpoints"), h("h2", { id: "alerts-title" }, "Alert channels")),
      h(
        "p",
        { class: "hint" },
        "Where the service tells you what went wrong: a signed webhook (Standard Webhooks) or a Slack incoming webhook. Repeats of one alert for one endpoint are sent as one, with their count.",
      ),
      created,
      form.element,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "alerts-table", "aria-labelledby": "alerts-title" },
          h("thead", {}, h("tr", {}, ...["Name", "Type", "URL", "Events", "Endpoints", "Last alert", ""].map((t) => h("th", { scope: "col" }, t)))),
          tbody,
        ),
      ),
    );

    /** Follows a test alert until the channel's last delivery is it, settled (or the wait ends). */
    async function follow(channelId: string, alertId: string): Promise<void> {
      const until = Date.now() + TEST_WAIT_MS;
      while (!control.signal.aborted && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        const list = await ctx.banner.guarded(() => ctx.client.alerts.list(control.signal));
        if (!list) return;
        render(list.items);
        const last = list.items.find((c) => c.id === channelId)?.lastDelivery;
        if (last?.alertId === alertId && last.state !== "pending") return;
      }
    }

    function row(c: AlertChannelJson): HTMLElement {
      const slugs = c.endpointIds.map((id) => ctx.endpoints.items().find((e) => e.id === id)?.slug ?? id.slice(0, 8));
      const test = h("button", { type: "button", class: "btn small", "data-testid": "test-channel", "aria-label": `Send a test alert to ${c.name}` }, "Test");
      const remove = h("button", { type: "button", class: "btn small danger", "data-testid": "delete-channel", "aria-label": `Delete ${c.name}` }, "Delete");
      test.addEventListener("click", async () => {
        test.disabled = true;
        const queued = await ctx.banner.guarded(() => ctx.client.alerts.test(c.id));
        if (queued) await follow(c.id, queued.alertId);
        test.disabled = false;
      });
      remove.addEventListener("click", async () => {
        if (!confirm(`Delete "${c.name}"? Alerts waiting for it are dropped.`)) return;
        remove.disabled = true;
        await ctx.banner.guarded(() => ctx.client.alerts.delete(c.id));
        void load();
      });
      return h(
        "tr",
        { "data-testid": "channel-row", "data-channel-id": c.id, "data-last-state": c.lastDelivery?.state ?? "" },
        h("td", { class: "keep" }, c.name),
        h("td", { class: "keep" }, c.type, c.secretSet ? h("span", { class: "hint" }, " signed") : null),
        h("td", { class: "mono keep", title: c.url }, shownUrl(c.url)),
        h("td", {}, ...c.events.flatMap((e, i) => [i ? ", " : "", h("span", { class: "keep-word" }, e)])),
        h("td", {}, slugs.length ? slugs.join(", ") : "all"),
        h("td", { class: "keep" }, lastDelivery(c.lastDelivery)),
        h("td", {}, h("div", { class: "row" }, test, remove)),
      );
    }

    function render(items: AlertChannelJson[]): void {
      clear(tbody, ...items.map(row), items.length ? null : h("tr", {}, h("td", { colspan: "7", class: "empty" }, "No alert channels yet.")));
    }

    async function load(): Promise<void> {
      const list = await ctx.banner.guarded(() => ctx.client.alerts.list(control.signal));
      if (list) render(list.items);
    }

    void load();
    void ctx.endpoints.load();
    return {
      element,
      dispose() {
        control.abort();
        form.dispose();
      },
    };
  },
};

/** The new channel's name, type, URL, events, endpoints and (webhook) secret; `onCreated` gets the answer. */
function createForm(ctx: AppContext, onCreated: (channel: CreatedAlertChannelJson) => void): { element: HTMLElement; dispose(): void } {
  const name = h("input", { name: "name", required: true, maxlength: "100", autocomplete: "off", placeholder: "e.g. on-call", "data-testid": "channel-name" });
  const type = h("select", { name: "type", "data-testid": "channel-type" }, ...ALERT_CHANNEL_TYPES.map((t) => h("option", { value: t }, t === "webhook" ? "Webhook (signed JSON)" : "Slack (incoming webhook)")));
  const url = h("input", { name: "url", type: "url", required: true, maxlength: "2048", placeholder: "https://...", "data-testid": "channel-url" });
  const secret = h("input", { name: "secret", autocomplete: "off", placeholder: "whsec_... (empty: one is generated)", "data-testid": "channel-secret" });
  const secretField = h("label", { class: "field" }, h("span", { class: "label" }, "Signing secret"), secret);
  type.addEventListener("change", () => (secretField.hidden = type.value !== "webhook"));
  const events = ALERT_EVENTS.map((event) => ({ event, box: h("input", { type: "checkbox", value: event, "data-testid": `channel-event-${event}` }) }));
  const endpointBoxes = h("div", { class: "checks-grid", "data-testid": "channel-endpoints" });
  const fillEndpoints = () => {
    const ticked = new Set([...endpointBoxes.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value));
    clear(
      endpointBoxes,
      ...ctx.endpoints
        .items()
        .map((ep) => h("label", { class: "check" }, h("input", { type: "checkbox", value: ep.id, checked: ticked.has(ep.id), "data-testid": `channel-endpoint-${ep.slug}` }), ep.slug)),
    );
  };
  fillEndpoints();
  const unsubscribe = ctx.endpoints.subscribe(fillEndpoints);
  const submit = h("button", { type: "submit", class: "btn primary", "data-testid": "create-channel" }, "Create channel");
  const form = h(
    "form",
    { class: "card form", "aria-label": "New alert channel" },
    h("h3", {}, "New channel"),
    h("label", { class: "field" }, h("span", { class: "label" }, "Name"), name),
    h("label", { class: "field" }, h("span", { class: "label" }, "Type"), type),
    h("label", { class: "field" }, h("span", { class: "label" }, "URL"), url),
    secretField,
    h(
      "fieldset",
      { class: "field" },
      h("legend", { class: "label" }, "Alerts"),
      h("div", { class: "checks-grid" }, ...events.map(({ event, box }) => h("label", { class: "check", title: EVENT_HINTS[event] }, box, h("span", {}, event, h("span", { class: "hint" }, ` ${EVENT_HINTS[event]}`))))),
    ),
    h("fieldset", { class: "field" }, h("legend", { class: "label" }, "Only these endpoints"), endpointBoxes, h("span", { class: "hint" }, "None ticked: every endpoint of the account.")),
    h("div", { class: "row" }, submit),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const endpointIds = [...endpointBoxes.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value);
    const channelType = type.value as AlertChannelType;
    const body: CreateAlertChannelRequest = {
      name: name.value.trim(),
      type: channelType,
      url: url.value.trim(),
      events: events.filter(({ box }) => box.checked).map(({ event }) => event),
      ...(endpointIds.length ? { endpointIds } : {}),
      ...(channelType === "webhook" && secret.value.trim() ? { secret: secret.value.trim() } : {}),
    };
    submit.disabled = true;
    const created = await ctx.banner.guarded(() => ctx.client.alerts.create(body));
    submit.disabled = false;
    if (!created) return;
    form.reset();
    secretField.hidden = false;
    fillEndpoints();
    onCreated(created);
  });
  return { element: form, dispose: unsubscribe };
}
