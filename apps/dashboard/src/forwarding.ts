import type { EventDetailJson, ForwardAttemptJson, ForwardedResponseJson } from "@whc/api-model";
import { h } from "./dom.js";
import { bytesOf, clockTime, duration, exactTime, hexDump, plural, relativeTime, size } from "./format.js";
import type { AppContext, EventTab, EventView } from "./views.js";

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

export function answerOf(a: ForwardAttemptJson): string {
  return a.error ?? (a.status === null ? "no answer" : `HTTP ${a.status}`);
}

const okAttempt = (a: ForwardAttemptJson) => a.status !== null && a.status >= 200 && a.status < 300;

/** One attempt on the timeline: its line, and what the destination answered when opened. */
function attemptElement(a: ForwardAttemptJson): HTMLElement {
  const ok = okAttempt(a);
  const headers = Object.entries(a.headers).flatMap(([name, values]) => values.map((v) => h("tr", {}, h("th", { scope: "row", class: "mono" }, name), h("td", { class: "mono" }, v))));
  return h(
    "li",
    { class: ok ? "ok" : "bad", "data-testid": "forward-attempt", "data-n": String(a.n) },
    h(
      "details",
      {},
      h(
        "summary",
        { class: "attempt-line" },
        h("span", { class: "attempt-n" }, `#${a.n}`),
        h("span", { class: "pill" }, a.trigger),
        h("span", { class: `pill ${ok ? "verified" : "failed"}`, "data-testid": "attempt-answer" }, answerOf(a)),
        h("span", { class: "muted" }, duration(a.durationMs)),
        h("time", { datetime: a.at, title: exactTime(a.at), class: "muted" }, clockTime(a.at)),
      ),
      h("p", { class: "url mono" }, a.url),
      headers.length ? h("div", { class: "table-scroll" }, h("table", { class: "kv", "data-testid": "attempt-headers" }, h("caption", { class: "visually-hidden" }, "Answer headers"), h("tbody", {}, ...headers))) : null,
      a.bodyBase64 ? h("pre", { class: "code wrap", "data-testid": "attempt-body" }, excerptText(a)) : h("p", { class: "empty" }, "No body."),
    ),
  );
}

function facts(delivery: ForwardedResponseJson): HTMLElement {
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "State"),
    h("dd", {}, h("span", { class: `pill forward ${delivery.state}`, "data-testid": "forward-state" }, delivery.state)),
    h("dt", {}, "Target"),
    h("dd", { class: "url mono" }, delivery.target),
    h("dt", {}, "Attempts"),
    h("dd", {}, plural(delivery.attempts.length, "attempt")),
    delivery.nextAttemptAt ? h("dt", {}, "Next attempt") : null,
    delivery.nextAttemptAt ? h("dd", { "data-testid": "next-attempt" }, h("time", { datetime: delivery.nextAttemptAt, title: exactTime(delivery.nextAttemptAt) }, relativeTime(delivery.nextAttemptAt))) : null,
  );
}

/**
 * The event's forwarding (design §11): state, destination, next attempt, every attempt on a
 * timeline with what it got back, and Redeliver.
 */
function renderDeliveries(ctx: AppContext, v: EventView): HTMLElement {
  const { endpoint, detail } = v;
  const delivery = deliveryOf(detail);
  const outcome = h("span", { class: "hint", role: "status", "data-testid": "redeliver-outcome" });
  const button = h("button", { type: "button", class: "btn", "data-testid": "redeliver", disabled: !endpoint.forward }, "Redeliver now");
  button.addEventListener("click", async () => {
    button.disabled = true;
    outcome.textContent = "Sending…";
    const attempt = await ctx.banner.guarded(() => ctx.client.events.redeliver(endpoint.id, detail.id));
    // A redacted event is sent as stored: the answer's warning says so (design §16).
    const warned = attempt?.warnings?.length ? ` — ${attempt.warnings.map((w) => w.message).join(" ")}` : "";
    outcome.textContent = attempt ? `#${attempt.n}: ${answerOf(attempt)} in ${duration(attempt.durationMs)}${warned}` : "";
    button.disabled = false;
    if (attempt) await v.reload();
  });
  return h(
    "section",
    { class: "forwarding", "data-testid": "forwarding", "aria-label": "Deliveries" },
    delivery ? facts(delivery) : h("p", { class: "empty", "data-testid": "not-forwarded" }, endpoint.forward ? "Not forwarded yet." : "Never forwarded."),
    delivery?.attempts.length ? h("ol", { class: "timeline", "data-testid": "forward-attempts" }, ...delivery.attempts.map(attemptElement)) : null,
    h("div", { class: "row" }, button, outcome),
    endpoint.forward
      ? null
      : h("p", { class: "hint" }, "The endpoint forwards nowhere now: ", h("a", { href: ctx.href({ endpointId: endpoint.id, tab: "settings" }) }, "set a destination"), " (relay or proxy) to deliver and redeliver."),
  );
}

export const deliveriesTab: EventTab = {
  segment: "deliveries",
  label: (d) => {
    const n = deliveryOf(d)?.attempts.length;
    return n ? `Deliveries ${n}` : "Deliveries";
  },
  render: renderDeliveries,
};
