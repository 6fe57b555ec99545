import type { EndpointJson } from "@whc/api-model";
import { copyButton } from "./copy.js";
import { h } from "./dom.js";

/** A shell word: single-quoted, a quote inside closed and escaped. */
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export function curlSnippet(ep: Pick<EndpointJson, "webhookUrl">): string {
  return [`curl -X POST ${quote(`${ep.webhookUrl}/hello?source=curl`)} \\`, `  -H 'Content-Type: application/json' \\`, `  -d '{"hello": "world"}'`].join("\n");
}

export function cliSnippet(ep: Pick<EndpointJson, "slug">, apiUrl: string): string {
  return [
    `export WHC_API_URL=${quote(apiUrl)} WHC_API_KEY=whc_...`,
    `whc events tail ${ep.slug}`,
    `whc listen ${ep.slug} --forward-to http://localhost:3000/webhooks`,
  ].join("\n");
}

function snippet(title: string, text: string, testid: string): HTMLElement {
  return h(
    "figure",
    { class: "snippet" },
    h("figcaption", {}, h("span", {}, title), copyButton("Copy", () => text, `copy-${testid}`, `Copy the ${title} snippet`)),
    h("pre", { class: "code", tabindex: "0", "data-testid": testid, "aria-label": title }, text),
  );
}

/** An endpoint with no capture yet: how to send it one, and how to follow it from a terminal. */
export function firstRequest(ep: EndpointJson): HTMLElement {
  return h(
    "div",
    { class: "first-request card", "data-testid": "no-events" },
    h("h3", {}, h("span", { class: "pulse", "aria-hidden": "true" }), "Waiting for the first request"),
    h("p", {}, "Send any method, sub-path and query to the webhook URL; it shows here as soon as it is captured."),
    snippet("cURL", curlSnippet(ep), "snippet-curl"),
    snippet("whc CLI", cliSnippet(ep, location.origin), "snippet-whc"),
  );
}
