import { HEADER_MASK, isSensitiveHeader, type EventDetailJson } from "@whc/api-model";
import { h } from "./dom.js";
import { plural } from "./format.js";
import type { EventTab, EventView } from "./views.js";

/** The endpoint's own signature header: masked too, as the cURL export masks it. */
function extraMasked(v: EventView): string[] {
  return v.endpoint.genericSignatureHeader ? [v.endpoint.genericSignatureHeader] : [];
}

function headerCount(d: EventDetailJson): number {
  return Object.values(d.headers).reduce((n, values) => n + values.length, 0);
}

/** Every captured header, credentials shown as [MASKED] until asked for; and the query, parsed. */
function renderHeaders(_ctx: unknown, v: EventView): HTMLElement {
  const secret: [HTMLElement, string][] = [];
  const rows = Object.entries(v.detail.headers).flatMap(([name, values]) =>
    values.map((value) => {
      const masked = isSensitiveHeader(name, extraMasked(v));
      const cell = h("td", { class: masked ? "mono masked" : "mono" }, masked ? HEADER_MASK : value);
      if (masked) secret.push([cell, value]);
      return h("tr", {}, h("th", { scope: "row", class: "mono" }, name), cell);
    }),
  );
  const reveal = secret.length
    ? h(
        "button",
        {
          type: "button",
          class: "btn small",
          "data-testid": "reveal-headers",
          onclick: (e) => {
            secret.forEach(([cell, value]) => ((cell.textContent = value), cell.classList.remove("masked")));
            (e.currentTarget as HTMLButtonElement).remove();
          },
        },
        `Show ${plural(secret.length, "masked value")}`,
      )
    : null;
  const query = v.detail.path.includes("?") ? [...new URLSearchParams(v.detail.path.slice(v.detail.path.indexOf("?") + 1))] : [];
  return h(
    "div",
    { class: "headers-tab" },
    h("div", { class: "row tools" }, h("span", { class: "hint" }, `${plural(headerCount(v.detail), "header")} as received`), h("span", { class: "spacer" }), reveal),
    h(
      "div",
      { class: "table-scroll" },
      h("table", { class: "kv", "data-testid": "headers" }, h("caption", { class: "visually-hidden" }, "Request headers"), h("tbody", {}, ...rows)),
    ),
    query.length
      ? h(
          "div",
          { class: "table-scroll" },
          h("h3", {}, "Query"),
          h("table", { class: "kv", "data-testid": "query" }, h("caption", { class: "visually-hidden" }, "Query parameters"), h("tbody", {}, ...query.map(([k, val]) => h("tr", {}, h("th", { scope: "row", class: "mono" }, k), h("td", { class: "mono" }, val))))),
        )
      : null,
  );
}

export const headersTab: EventTab = { segment: "headers", label: (d) => `Headers ${headerCount(d)}`, render: renderHeaders };
