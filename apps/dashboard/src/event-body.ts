import type { EventDetailJson } from "@whc/api-model";
import { copyButton } from "./copy.js";
import { h } from "./dom.js";
import { bytesOf, hexDump, parseJson, size } from "./format.js";
import { jsonTree } from "./json-tree.js";
import { withQuery } from "./router.js";
import type { AppContext, EventTab, EventView } from "./views.js";

const VIEWS = ["pretty", "raw", "hex"] as const;
type BodyView = (typeof VIEWS)[number];

function contentType(d: EventDetailJson): string {
  const entry = Object.entries(d.headers).find(([name]) => name.toLowerCase() === "content-type");
  return entry?.[1][0]?.toLowerCase() ?? "";
}

/** Form fields, in order, repeated names kept. */
function formTable(text: string): HTMLElement {
  const rows = [...new URLSearchParams(text)].map(([name, value]) => h("tr", {}, h("th", { scope: "row", class: "mono" }, name), h("td", { class: "mono" }, value)));
  return h("div", { class: "table-scroll" }, h("table", { class: "kv", "data-testid": "form-fields" }, h("caption", { class: "visually-hidden" }, "Form fields"), ...rows));
}

/** The pretty view: a JSON tree, a form's fields, or the text itself. */
function pretty(d: EventDetailJson, body: string): HTMLElement {
  if (d.bodyEncoding === "base64") return h("pre", { class: "code hex", tabindex: "0", "data-testid": "body" }, hexDump(bytesOf(body, "base64")));
  const json = parseJson(body);
  if (json.ok) return h("div", { "data-testid": "body" }, jsonTree(json.value));
  if (contentType(d).startsWith("application/x-www-form-urlencoded")) return h("div", { "data-testid": "body" }, formTable(body));
  return h("pre", { class: "code wrap", tabindex: "0", "data-testid": "body" }, body);
}

function bodyContent(d: EventDetailJson, view: BodyView, wrap: boolean): HTMLElement {
  if (d.body === undefined) {
    return h("p", { class: "empty", "data-testid": "no-body" }, d.decryption === "metadata_only" ? "Metadata only: the body was not stored." : "The body cannot be decrypted.");
  }
  if (view === "hex") return h("pre", { class: "code hex", tabindex: "0", "aria-label": "Body as hex", "data-testid": "body" }, hexDump(bytesOf(d.body, d.bodyEncoding)));
  if (view === "raw") {
    const text = d.bodyEncoding === "base64" ? atob(d.body) : d.body;
    return h("pre", { class: `code ${wrap ? "wrap" : "nowrap"}`, tabindex: "0", "aria-label": "Raw body", "data-testid": "body" }, text);
  }
  return pretty(d, d.body);
}

function renderBody(ctx: AppContext, v: EventView): HTMLElement {
  const d = v.detail;
  const view = VIEWS.find((x) => x === v.route.query.view) ?? "pretty";
  const wrap = v.route.query.wrap === "1";
  const link = (to: BodyView) =>
    h(
      "a",
      {
        href: ctx.href({ ...v.route, query: withQuery(v.route.query, { view: to === "pretty" ? "" : to }) }),
        class: to === view ? "seg active" : "seg",
        "aria-current": to === view ? "true" : undefined,
        "data-testid": `view-${to}`,
      },
      to === "pretty" ? "Pretty" : to === "raw" ? "Raw" : "Hex",
    );
  const bytes = d.body === undefined ? undefined : bytesOf(d.body, d.bodyEncoding);
  return h(
    "div",
    { class: "body-tab" },
    h(
      "div",
      { class: "row tools" },
      h("nav", { class: "segmented", "aria-label": "Body view" }, ...VIEWS.map(link)),
      view === "raw"
        ? h("a", { class: "btn small ghost", href: ctx.href({ ...v.route, query: withQuery(v.route.query, { wrap: wrap ? "" : "1" }) }), "data-testid": "toggle-wrap" }, wrap ? "No wrap" : "Wrap lines")
        : null,
      h("span", { class: "spacer" }),
      h("span", { class: "hint" }, [contentType(d) || "no content type", bytes ? size(bytes.length) : "", d.truncated ? "stored truncated" : ""].filter(Boolean).join(" · ")),
      d.body !== undefined && d.bodyEncoding !== "base64" ? copyButton("Copy body", () => d.body!, "copy-body") : null,
    ),
    bodyContent(d, view, wrap),
  );
}

export const bodyTab: EventTab = { segment: "body", label: () => "Body", render: renderBody };
