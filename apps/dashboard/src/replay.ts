import { REPLAY_MODES, type EndpointJson, type ReplayRequest, type ReplayResultJson } from "@whc/api-model";
import { warningsElement } from "./diagnosis.js";
import { clear, h } from "./dom.js";
import { duration } from "./format.js";
import type { AppContext } from "./views.js";

function outcomeOf(res: ReplayResultJson): (HTMLElement | null)[] {
  const excerpt = res.response_excerpt_base64 ? atob(res.response_excerpt_base64) : "";
  return [
    h(
      "p",
      {},
      h("strong", { class: `pill ${res.result === "delivered" ? "verified" : "failed"}` }, res.result),
      res.target_status ? ` · HTTP ${res.target_status}` : "",
      res.network_failure_reason ? ` · ${res.network_failure_reason}` : "",
      ` · ${res.duration_ms} ms · ${res.mode}`,
    ),
    warningsElement(res.warnings, "replay-warnings"),
    excerpt ? h("pre", { class: "code wrap excerpt" }, excerpt, res.excerpt_truncated ? "\n…" : "") : null,
  ];
}

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

/**
 * The replay dialog: sends the event to a URL as the dashboard (the API applies the endpoint's
 * replayFromDashboard, which also disables the form here). The last target is remembered for
 * the browser session, as a convenience across events.
 */
export function replayDialog(ctx: AppContext, endpoint: EndpointJson, eventId: string): HTMLDialogElement {
  const disabled = !endpoint.replayFromDashboard;
  const target = h("input", { type: "url", placeholder: "https://example.com/webhooks", required: true, maxlength: "2048", "data-testid": "replay-url", disabled, value: sessionStorage.getItem("whc.replayTarget") ?? "" });
  const mode = h("select", { "data-testid": "replay-mode", disabled }, h("option", { value: "" }, "Automatic"), ...REPLAY_MODES.map((m) => h("option", { value: m }, m)));
  const secret = h("input", { type: "password", autocomplete: "new-password", maxlength: "1024", "data-testid": "replay-secret", disabled });
  const outcome = h("div", { class: "outcome", role: "status", "data-testid": "replay-outcome" });
  const send = h("button", { type: "submit", class: "btn primary", "data-testid": "replay", disabled }, "Send");
  const close = h("button", { type: "button", class: "btn ghost", "data-testid": "close-replay" }, "Close");
  const form = h(
    "form",
    { class: "form", method: "dialog" },
    h("h2", { id: `replay-title-${eventId}` }, "Replay this event"),
    disabled
      ? h("p", { class: "hint warn", "data-testid": "replay-disabled" }, "Replay from the dashboard is disabled for this endpoint (replayFromDashboard is false in its settings).")
      : h("p", { class: "hint" }, "Sends the captured method, sub-path, headers and body to a URL of yours, and shows what it answered."),
    field("Target URL", target),
    field("Mode", mode, "exact: as captured; resign: signatures recomputed with the target secret."),
    field("Target secret (resign)", secret),
    h("div", { class: "row" }, send, close),
    outcome,
  );
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": `replay-title-${eventId}`, "data-testid": "replay-dialog" }, form);
  close.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(outcome, "Sending…");
    sessionStorage.setItem("whc.replayTarget", target.value);
    const body: ReplayRequest = {
      target_url: target.value,
      ...(mode.value ? { mode: REPLAY_MODES.find((m) => m === mode.value) } : {}),
      ...(secret.value ? { target_secret: secret.value } : {}),
    };
    send.disabled = true;
    const started = performance.now();
    const res = await ctx.banner.guarded(() => ctx.client.events.replay(endpoint.id, eventId, body));
    send.disabled = false;
    clear(outcome, ...(res ? outcomeOf(res) : [h("p", { class: "problem" }, ctx.banner.element.textContent || `Failed after ${duration(performance.now() - started)}`)]));
  });
  return dialog;
}
