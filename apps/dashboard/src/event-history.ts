import { ApiError, type AuditEntryJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import { exactTime, relativeTime } from "./format.js";
import type { AppContext, EventTab, EventView } from "./views.js";

/** What an action did to the event, in words, from its entry's details. */
function summary(e: AuditEntryJson): string {
  const d = e.details;
  const text = (k: string) => (typeof d[k] === "string" || typeof d[k] === "number" ? String(d[k]) : undefined);
  switch (e.action) {
    case "event.replayed": {
      const edited = d.edited && typeof d.edited === "object" ? ", edited" : "";
      return [`${text("mode") ?? "exact"}${edited} to ${text("target") ?? "?"}`, text("result")].filter(Boolean).join(": ");
    }
    case "event.redelivered":
      return `attempt ${text("attempt") ?? "?"}${text("status") ? `, answered ${text("status")}` : ""}`;
    case "event.curl_exported":
      return d.unmasked ? "unmasked" : "masked";
    case "event.read":
      return "its body was read";
    default:
      return Object.keys(d).length ? JSON.stringify(d) : "";
  }
}

const LABELS: Record<string, string> = {
  "event.read": "read",
  "event.replayed": "replayed",
  "event.redelivered": "redelivered",
  "event.curl_exported": "copied as cURL",
  "event.deleted": "deleted",
  "event.triggered": "triggered",
};

/**
 * The event's history (design §15's audit log, filtered to the event): who read it, copied it as
 * cURL, replayed it (where, how, with what result) or redelivered it, newest first. Reading the
 * log needs scope `audit:read`; a key without it is told so.
 */
function renderHistory(ctx: AppContext, v: EventView): HTMLElement {
  const body = h("div", { "aria-live": "polite", "aria-busy": "true" }, h("p", { class: "hint" }, "Loading…"));
  void ctx.client.audit.list({ endpointId: v.endpoint.id, eventId: v.detail.id, limit: "100" }).then(
    (page) => {
      body.setAttribute("aria-busy", "false");
      if (page.items.length === 0) return clear(body, h("p", { class: "empty", "data-testid": "history-empty" }, "Nothing was done to this event yet."));
      clear(
        body,
        h(
          "div",
          { class: "table-scroll" },
          h(
            "table",
            { class: "list-table", "data-testid": "history" },
            h("thead", {}, h("tr", {}, ...["When", "What", "Key", "From", "Details"].map((t) => h("th", { scope: "col" }, t)))),
            h(
              "tbody",
              {},
              ...page.items.map((e) =>
                h(
                  "tr",
                  { "data-testid": "history-row", "data-action": e.action },
                  h("td", {}, h("time", { datetime: e.at, title: exactTime(e.at), "data-relative": e.at }, relativeTime(e.at))),
                  h("td", {}, h("span", { class: "pill" }, LABELS[e.action] ?? e.action)),
                  h("td", { class: "mono", title: e.keyId }, `${e.keyPrefix}…`),
                  h("td", { class: "mono" }, e.remoteIp),
                  h("td", { class: "mono", "data-testid": "history-details" }, summary(e)),
                ),
              ),
            ),
          ),
        ),
        page.nextBefore ? h("p", { class: "hint" }, "The 100 most recent are shown; the audit log has them all.") : null,
      );
    },
    (err: unknown) => {
      body.setAttribute("aria-busy", "false");
      const forbidden = ApiError.is(err) && err.status === 403;
      clear(body, h("p", { class: "empty", "data-testid": "history-unavailable" }, forbidden ? "Reading an event's history needs a key with scope audit:read." : `The history could not be read${err instanceof Error ? `: ${err.message}` : "."}`));
    },
  );
  return h("div", { class: "history-view" }, body);
}

export const historyTab: EventTab = { segment: "history", label: () => "History", render: renderHistory };
