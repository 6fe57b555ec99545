import type { EventSummaryJson } from "@whc/api-model";
import { h } from "./dom.js";
import { exactTime, relativeTime, size } from "./format.js";

/** The dense table's columns, in order; `narrow` ones stay when the pane is narrow. */
export const COLUMNS = [
  { key: "method", label: "Method" },
  { key: "path", label: "Sub-path" },
  { key: "type", label: "Event type" },
  { key: "verify", label: "Signature" },
  { key: "status", label: "Status" },
  { key: "size", label: "Size" },
  { key: "forward", label: "Forward" },
  { key: "time", label: "Received" },
] as const;

export function statusClass(code: number): string {
  return code >= 500 ? "s5" : code >= 400 ? "s4" : code >= 300 ? "s3" : code >= 200 ? "s2" : "s0";
}

function pathCell(e: EventSummaryJson, path: string | undefined): HTMLElement {
  const shown = path === undefined ? h("span", { class: "muted", title: "loading the sub-path" }, "…") : h("span", { class: "mono path", title: path || "the webhook URL itself" }, path || "/");
  return h(
    "td",
    { class: "c-path" },
    shown,
    e.truncated ? h("span", { class: "pill warn", title: "Stored truncated: the body was over the limit" }, "truncated") : null,
    e.decryption !== "ok" ? h("span", { class: "pill warn", title: "The body is not shown" }, e.decryption.replace("_", " ")) : null,
    e.duplicateOf ? h("span", { class: "pill warn", "data-testid": "duplicate-badge", title: `A repeat of ${e.duplicateOf}: stored and answered, not forwarded` }, "duplicate") : null,
    // Under the sub-path when the pane is too narrow for the other columns.
    h(
      "span",
      { class: "sub" },
      e.canonicalEventType ? h("span", { class: "ellipsis" }, e.canonicalEventType) : null,
      h("span", { class: `pill small v-sub ${e.verification}` }, e.verification),
      e.forwardState ? h("span", { class: `pill small forward ${e.forwardState}` }, `→ ${e.forwardState}`) : null,
    ),
  );
}

export function eventRow(e: EventSummaryJson, href: string, path: string | undefined): HTMLTableRowElement {
  const label = `${e.method} ${path ?? ""} ${e.canonicalEventType ?? ""}, ${e.verification}, ${e.responseCode}, ${relativeTime(e.receivedAt)}`.replace(/\s+/g, " ");
  return h(
    "tr",
    { "data-testid": "event-row", "data-event-id": e.id, class: e.readAt ? "" : "unread" },
    h(
      "td",
      { class: "c-method" },
      h("span", { class: "dot", title: e.readAt ? undefined : "unread" }),
      h("a", { class: "row-link", href, "aria-label": `${e.readAt ? "" : "Unread: "}${label}` }, e.method),
    ),
    pathCell(e, path),
    h("td", { class: "c-type ellipsis", title: e.canonicalEventType ?? "" }, e.canonicalEventType ?? h("span", { class: "muted" }, "—")),
    h("td", { class: "c-verify" }, h("span", { class: `pill ${e.verification}`, title: e.verificationFailureReason ?? e.verification }, e.verification)),
    h("td", { class: "c-status" }, h("span", { class: `status-code ${statusClass(e.responseCode)}`, title: "what the endpoint answered" }, String(e.responseCode))),
    h("td", { class: "c-size" }, size(e.originalSizeBytes)),
    h(
      "td",
      { class: "c-forward" },
      e.forwardState ? h("span", { class: `pill forward ${e.forwardState}`, "data-testid": "forward-badge", title: "forward state" }, `→ ${e.forwardState}`) : null,
    ),
    h("td", { class: "c-time" }, h("time", { datetime: e.receivedAt, title: exactTime(e.receivedAt), "data-relative": e.receivedAt }, relativeTime(e.receivedAt))),
  );
}

export function tableHead(): HTMLTableSectionElement {
  return h("thead", {}, h("tr", {}, ...COLUMNS.map((c) => h("th", { scope: "col", class: `c-${c.key}` }, c.label))));
}
