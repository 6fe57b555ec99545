import { LISTENER_HEARTBEAT_S, type EndpointJson, type ListenerJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import { exactTime, plural, relativeTime } from "./format.js";
import { cliSnippet } from "./first-request.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

/** One running `whc listen`: where, since when, how far behind, its last error. */
function row(ctx: AppContext, ep: EndpointJson, l: ListenerJson, now: number): HTMLElement {
  const lag = l.lagEvents === 0 ? "caught up" : `${plural(l.lagEvents, "event")} behind`;
  return h(
    "tr",
    { "data-testid": "listener-row", "data-listener-id": l.id },
    h("td", { class: "mono" }, l.host),
    h("td", { title: exactTime(l.startedAt) }, relativeTime(l.startedAt, now)),
    h("td", { title: exactTime(l.lastSeenAt) }, relativeTime(l.lastSeenAt, now)),
    h("td", {}, l.stalled ? h("span", { class: "pill failed", "data-testid": "listener-stalled", title: "Behind at every heartbeat for 2 minutes, the lag never falling" }, "stalled") : lag),
    h(
      "td",
      {},
      l.cursor
        ? h("a", { href: ctx.href({ endpointId: ep.id, eventId: l.cursor.id }), title: `Past the event received ${exactTime(l.cursor.at)}`, "data-testid": "listener-cursor" }, relativeTime(l.cursor.at, now))
        : "not started",
    ),
    h("td", { class: l.lastError ? "problem" : "empty" }, l.lastError ?? "—"),
  );
}

/**
 * The endpoint's listeners (design §19, `GET .../listeners`): every `whc listen` that forwards its
 * captures to a developer's machine, seen from outside, refreshed at the heartbeat's pace.
 */
function mountListeners(ctx: AppContext, ep: EndpointJson): Mounted {
  const body = h("div", { "aria-live": "polite", "aria-busy": "true" }, h("p", { class: "hint" }, "Loading…"));
  const element = h(
    "div",
    { class: "listeners-view" },
    h("p", { class: "hint" }, `Each running whc listen registers here and checks in every ${LISTENER_HEARTBEAT_S} s; one that stops checking in leaves the list 30 s later.`),
    body,
  );
  let control = new AbortController();

  async function load(): Promise<void> {
    control.abort();
    control = new AbortController();
    const signal = control.signal;
    const list = await ctx.banner.guarded(() => ctx.client.listeners.list(ep.id, signal));
    if (signal.aborted) return;
    body.setAttribute("aria-busy", "false");
    if (!list) return clear(body, h("p", { class: "empty" }, "The listeners could not be read."));
    if (list.items.length === 0) {
      return clear(
        body,
        h(
          "div",
          { class: "card", "data-testid": "no-listeners" },
          h("h3", {}, "No listener running"),
          h("p", {}, "Forward this endpoint's captures to an app on your machine, with fresh signatures and nothing skipped:"),
          h("pre", { class: "code", tabindex: "0", "aria-label": "whc listen" }, cliSnippet(ep, location.origin)),
        ),
      );
    }
    const now = Date.now();
    clear(
      body,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "listeners" },
          h(
            "thead",
            {},
            h("tr", {}, ...["Host", "Started", "Last seen", "Lag", "Past the event of", "Last error"].map((t) => h("th", { scope: "col" }, t))),
          ),
          h("tbody", {}, ...list.items.map((l) => row(ctx, ep, l, now))),
        ),
      ),
    );
  }

  void load();
  const timer = setInterval(() => void load(), LISTENER_HEARTBEAT_S * 1000);
  return {
    element,
    dispose: () => {
      clearInterval(timer);
      control.abort();
    },
  };
}

export const listenersTab: EndpointTab = { segment: "listeners", label: "Listeners", mount: mountListeners };
