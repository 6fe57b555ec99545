import type { ApiClient, CurlExportJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { copy } from "./copy.js";
import { warningsElement } from "./diagnosis.js";
import { clear, h } from "./dom.js";

function flags(res: CurlExportJson): string {
  return [
    res.headersMasked ? "secret headers masked" : "headers unmasked",
    res.bodyOmitted ? "body omitted" : res.byteIdentical ? "body byte-identical" : "body truncated",
  ].join(" · ");
}

/** "Copy as cURL": the API's export of the event, shown and copied, masked unless asked. */
export function curlExport(client: ApiClient, banner: Banner, endpointId: string, eventId: string): HTMLElement {
  const unmasked = h("input", { type: "checkbox", "data-testid": "curl-unmasked" });
  const command = h("pre", { class: "curl", "data-testid": "curl-command" });
  const hint = h("p", { class: "hint", "data-testid": "curl-flags" });
  const warnings = h("div");
  const button = h("button", { type: "button", "data-testid": "copy-curl" }, "Copy as cURL");
  button.addEventListener("click", async () => {
    const res = await banner.guarded(() => client.events.curl(endpointId, eventId, { unmasked: unmasked.checked }));
    if (!res) return;
    command.textContent = res.command;
    hint.textContent = flags(res);
    clear(warnings, warningsElement(res.warnings, "curl-warnings"));
    await copy(res.command, button);
  });
  return h("div", { class: "curl-export" }, h("div", { class: "row" }, button, h("label", {}, unmasked, " unmasked")), hint, warnings, command);
}
