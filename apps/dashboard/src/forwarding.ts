import type { ApiClient, EndpointJson, EventDetailJson, ForwardAttemptJson, ForwardedResponseJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { h } from "./dom.js";
import { bytesOf, hexDump, size, time } from "./format.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The event's delivery, or undefined for an event never forwarded (`{}`). */
export function deliveryOf(d: Pick<EventDetailJson, "forwardedResponse">): ForwardedResponseJson | undefined {
  const fr = d.forwardedResponse as Partial<ForwardedResponseJson>;
  return fr.state ? (fr as ForwardedResponseJson) : undefined;
}

/** An answer's excerpt as text when it is UTF-8, else as a hex dump. */
function excerptText(a: ForwardAttemptJson): string {
  const bytes = bytesOf(a.bodyBase64, "base64");
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = hexDump(bytes);
  }
  return a.bodyTruncated ? `${text}\n… (first ${size(bytes.length)} kept)` : text;
}

function answerOf(a: ForwardAttemptJson): string {
  return a.error ?? (a.status === null ? "no answer" : `HTTP ${a.status}`);
}

/** One attempt: its line, and what the destination answered when opened. */
function attemptElement(a: ForwardAttemptJson): HTMLElement {
  const ok = a.status !== null && a.status >= 200 && a.status < 300;
  const headers = Object.entries(a.headers).flatMap(([name, values]) => values.map((v) => h("tr", {}, h("th", {}, name), h("td", {}, v))));
  return h(
    "li",
    { "data-testid": "forward-attempt", "data-n": String(a.n) },
    h(
      "details",
      {},
      h(
        "summary",
        { class: "attempt-line" },
        h("span", { class: "attempt-n" }, `#${a.n}`),
        h("span", { class: "badge" }, a.trigger),
        h("span", { class: "time" }, time(a.at)),
        h("span", { class: `badge ${ok ? "verified" : "failed"}`, "data-testid": "attempt-answer" }, answerOf(a)),
        h("span", { class: "size" }, `${a.durationMs} ms`),
      ),
      h("p", { class: "url" }, a.url),
      headers.length ? h("table", { class: "headers", "data-testid": "attempt-headers" }, ...headers) : null,
      a.bodyBase64 ? h("pre", { "data-testid": "attempt-body" }, excerptText(a)) : h("p", { class: "empty" }, "No body."),
    ),
  );
}

export interface ForwardingOptions {
  client: ApiClient;
  banner: Banner;
  endpoint: EndpointJson;
  detail: EventDetailJson;
  /** After a redelivery: show the event again, with its new attempt. */
  refresh(): Promise<void>;
}

/**
 * The event's forwarding (design §11): state, destination, next attempt, every attempt with
 * what it got back, and Redeliver. Nothing for an event never forwarded by an endpoint that
 * does not forward.
 */
export function forwardingElement({ client, banner, endpoint, detail, refresh }: ForwardingOptions): HTMLElement | null {
  const delivery = deliveryOf(detail);
  if (!delivery && !endpoint.forward) return null;
  const outcome = h("span", { class: "hint", "data-testid": "redeliver-outcome" });
  const button = h("button", { type: "button", "data-testid": "redeliver", disabled: !endpoint.forward }, "Redeliver");
  button.addEventListener("click", async () => {
    button.disabled = true;
    outcome.textContent = "Sending…";
    const attempt = await banner.guarded(() => client.events.redeliver(endpoint.id, detail.id));
    outcome.textContent = attempt ? `#${attempt.n}: ${answerOf(attempt)} in ${attempt.durationMs} ms` : "";
    button.disabled = false;
    if (attempt) await refresh();
  });
  const facts = delivery
    ? h(
        "dl",
        { class: "facts" },
        h("dt", {}, "State"), h("dd", {}, h("span", { class: `badge forward ${delivery.state}`, "data-testid": "forward-state" }, delivery.state)),
        h("dt", {}, "Target"), h("dd", { class: "url" }, delivery.target),
        delivery.nextAttemptAt ? h("dt", {}, "Next attempt") : null,
        delivery.nextAttemptAt ? h("dd", { "data-testid": "next-attempt" }, time(delivery.nextAttemptAt)) : null,
      )
    : h("p", { class: "empty", "data-testid": "not-forwarded" }, "Not forwarded yet.");
  const attempts = delivery?.attempts.length ? h("ol", { class: "list attempts", "data-testid": "forward-attempts" }, ...delivery.attempts.map(attemptElement)) : null;
  return h(
    "section",
    { class: "forwarding", "data-testid": "forwarding" },
    h("h3", {}, "Forwarding"),
    facts,
    attempts,
    h("div", { class: "row" }, button, outcome),
    endpoint.forward ? null : h("p", { class: "hint" }, "The endpoint forwards nowhere now: set a destination to redeliver."),
  );
}
