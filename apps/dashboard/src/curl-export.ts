import type { CurlExportJson } from "@whc/api-model";
import { copy } from "./copy.js";
import { warningsElement } from "./diagnosis.js";
import { clear, h } from "./dom.js";
import type { AppContext, EventTab, EventView } from "./views.js";

function flags(res: CurlExportJson): string {
  return [
    res.headersMasked ? "secret headers masked" : "headers unmasked",
    res.bodyOmitted ? "body omitted" : res.byteIdentical ? "body byte-identical" : "body truncated",
  ].join(" · ");
}

/** "Copy as cURL": the API's export of the event, shown and copied, masked unless asked. */
function renderCurl(ctx: AppContext, v: EventView): HTMLElement {
  const unmasked = h("input", { type: "checkbox", id: "curl-unmasked", "data-testid": "curl-unmasked" });
  const command = h("pre", { class: "code nowrap curl", tabindex: "0", "aria-label": "cURL command", "data-testid": "curl-command" });
  const hint = h("p", { class: "hint", "data-testid": "curl-flags" });
  const warnings = h("div");
  const button = h("button", { type: "button", class: "btn primary", "data-testid": "copy-curl", "data-label": "Copy as cURL" }, "Copy as cURL");
  let shown: { res: CurlExportJson; unmasked: boolean } | undefined;

  async function load(): Promise<CurlExportJson | undefined> {
    const res = await ctx.banner.guarded(() => ctx.client.events.curl(v.endpoint.id, v.detail.id, { unmasked: unmasked.checked }));
    if (!res) return undefined;
    shown = { res, unmasked: unmasked.checked };
    command.textContent = res.command;
    hint.textContent = flags(res);
    clear(warnings, warningsElement(res.warnings, "curl-warnings"));
    return res;
  }

  button.addEventListener("click", async () => {
    const res = shown?.unmasked === unmasked.checked ? shown.res : await load();
    if (res) await copy(res.command, button);
  });
  unmasked.addEventListener("change", () => void load());
  void load();
  return h(
    "div",
    { class: "curl-export" },
    h("div", { class: "row tools" }, button, h("label", { class: "check", for: "curl-unmasked" }, unmasked, h("span", {}, "Show secret headers"))),
    hint,
    warnings,
    command,
  );
}

export const curlTab: EventTab = { segment: "curl", label: () => "cURL", render: renderCurl };
