import type { ApiClient, EndpointJson, EventDetailJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { curlExport } from "./curl-export.js";
import { diagnosisElement } from "./diagnosis.js";
import { clear, h } from "./dom.js";
import { bytesOf, hexDump, prettyJson, size, time } from "./format.js";
import { forwardingElement } from "./forwarding.js";
import { replayForm } from "./replay.js";

export interface DetailPane {
  readonly element: HTMLElement;
  open(endpoint: EndpointJson, eventId: string): Promise<void>;
  clear(): void;
}

type BodyView = "pretty" | "raw" | "hex";
const VIEWS: readonly BodyView[] = ["pretty", "raw", "hex"];
const MASKED = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|signature|api-key|apikey|hmac/i;

function facts(d: EventDetailJson): HTMLElement {
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Received"), h("dd", {}, time(d.receivedAt)),
    h("dt", {}, "From"), h("dd", {}, d.remoteIp),
    h("dt", {}, "Path"), h("dd", { "data-testid": "path" }, d.path || "(none: the webhook URL itself)"),
    h("dt", {}, "Provider"), h("dd", {}, d.provider),
    h("dt", {}, "Verification"), h("dd", { "data-testid": "verification" }, d.verification, d.verificationFailureReason ? ` (${d.verificationFailureReason})` : ""),
    h("dt", {}, "Answered"), h("dd", {}, String(d.responseCode)),
    h("dt", {}, "Size"), h("dd", {}, size(d.originalSizeBytes), d.truncated ? h("span", { class: "badge warn", "data-testid": "truncated" }, " stored truncated") : ""),
  );
}

/** The headers, credentials hidden until asked for (as in the cURL export), and the button that shows them. */
function headers(d: EventDetailJson): HTMLElement[] {
  const secretCells: [HTMLElement, string][] = [];
  const table = h(
    "table",
    { class: "headers", "data-testid": "headers" },
    ...Object.entries(d.headers).flatMap(([name, values]) =>
      values.map((v) => {
        const masked = MASKED.test(name);
        const cell = h("td", {}, masked ? "[MASKED]" : v);
        if (masked) secretCells.push([cell, v]);
        return h("tr", {}, h("th", {}, name), cell);
      }),
    ),
  );
  if (!secretCells.length) return [table];
  const reveal = h("button", {
    type: "button",
    class: "link",
    "data-testid": "reveal-headers",
    onclick: () => secretCells.forEach(([cell, value]) => (cell.textContent = value)),
  }, "Show masked values");
  return [table, reveal];
}

function bodyView(d: EventDetailJson, view: BodyView): HTMLElement {
  if (d.body === undefined) {
    return h("p", { class: "empty" }, d.decryption === "metadata_only" ? "Metadata only: the body was not stored." : "The body cannot be decrypted.");
  }
  let text: string;
  if (view === "hex" || (view === "pretty" && d.bodyEncoding === "base64")) text = hexDump(bytesOf(d.body, d.bodyEncoding));
  else if (view === "pretty") text = prettyJson(d.body) ?? d.body;
  else text = d.body;
  return h("pre", { class: "body", "data-testid": "body" }, text);
}

/** The body with its pretty, raw and hex tabs; a tab swaps only the body. */
function body(d: EventDetailJson): HTMLElement[] {
  const tabs = h("div", { class: "tabs" });
  const content = h("div");
  const show = (view: BodyView) => {
    clear(tabs, ...VIEWS.map((v) => h("button", { type: "button", class: v === view ? "active" : "", "data-testid": `view-${v}`, onclick: () => show(v) }, v)));
    clear(content, bodyView(d, view));
  };
  show("pretty");
  return [tabs, content];
}

export interface DetailPaneOptions {
  client: ApiClient;
  banner: Banner;
  onOpened(detail: EventDetailJson): void;
  /** A provider's label ("Stripe") for the diagnosis; undefined shows its name. */
  providerLabel(name: string): string | undefined;
}

/** One event: its diagnosis, facts, forwarding, headers, body, copy as cURL and replay. */
export function createDetailPane({ client, banner, onOpened, providerLabel }: DetailPaneOptions): DetailPane {
  const element = h("section", { class: "pane detail", "data-testid": "detail" });
  let shown: string | undefined;

  async function open(endpoint: EndpointJson, eventId: string): Promise<void> {
    shown = eventId;
    const d = await banner.guarded(() => client.events.get(endpoint.id, eventId));
    if (!d || shown !== eventId) return;
    // Which event the pane shows, once it shows it (the previous one stays until then).
    element.dataset.eventId = eventId;
    onOpened(d);
    clear(
      element,
      h("h2", {}, `${d.method} · ${d.canonicalEventType ?? "event"}`),
      diagnosisElement(d.diagnostic, { responseCode: d.responseCode, providerLabel }),
      facts(d),
      forwardingElement({ client, banner, endpoint, detail: d, refresh: () => open(endpoint, eventId) }),
      h("h3", {}, "Headers"),
      ...headers(d),
      h("h3", {}, "Body"),
      ...body(d),
      curlExport(client, banner, endpoint.id, d.id),
      replayForm(client, banner, endpoint, d.id),
    );
  }

  return {
    element,
    open,
    clear() {
      shown = undefined;
      clear(element);
    },
  };
}
