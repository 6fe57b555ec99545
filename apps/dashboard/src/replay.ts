import { REPLAY_MODES, type ApiClient, type EndpointJson, type ReplayRequest, type ReplayResultJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import { warningsElement } from "./diagnosis.js";
import { clear, h } from "./dom.js";

function outcomeOf(res: ReplayResultJson): (HTMLElement | null)[] {
  const excerpt = res.response_excerpt_base64 ? atob(res.response_excerpt_base64) : "";
  return [
    h(
      "p",
      {},
      h("strong", {}, res.result),
      res.target_status ? ` · HTTP ${res.target_status}` : "",
      res.network_failure_reason ? ` · ${res.network_failure_reason}` : "",
      ` · ${res.duration_ms} ms · ${res.mode}`,
    ),
    warningsElement(res.warnings, "replay-warnings"),
    excerpt ? h("pre", { class: "excerpt" }, excerpt, res.excerpt_truncated ? "\n…" : "") : null,
  ];
}

/**
 * Replays the event to a URL, as the dashboard: the API applies the endpoint's
 * replayFromDashboard, which also disables the form here.
 */
export function replayForm(client: ApiClient, banner: Banner, endpoint: EndpointJson, eventId: string): HTMLFormElement {
  const disabled = !endpoint.replayFromDashboard;
  const target = h("input", { type: "url", placeholder: "https://example.com/webhooks", required: true, "data-testid": "replay-url", disabled });
  const mode = h(
    "select",
    { "data-testid": "replay-mode", disabled },
    h("option", { value: "" }, "mode: automatic"),
    ...REPLAY_MODES.map((m) => h("option", { value: m }, m)),
  );
  const secret = h("input", { type: "password", placeholder: "target secret (re-sign)", "data-testid": "replay-secret", disabled });
  const outcome = h("div", { class: "outcome", "data-testid": "replay-outcome" });
  const form = h(
    "form",
    { class: "replay" },
    h("h3", {}, "Replay"),
    disabled
      ? h("p", { class: "hint", "data-testid": "replay-disabled" }, "Replay from the dashboard is disabled for this endpoint (replayFromDashboard is false).")
      : null,
    target,
    mode,
    secret,
    h("button", { type: "submit", "data-testid": "replay", disabled }, "Send"),
    outcome,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(outcome, "Sending…");
    const body: ReplayRequest = {
      target_url: target.value,
      ...(mode.value ? { mode: REPLAY_MODES.find((m) => m === mode.value) } : {}),
      ...(secret.value ? { target_secret: secret.value } : {}),
    };
    const res = await banner.guarded(() => client.events.replay(endpoint.id, eventId, body, { client: "dashboard" }));
    clear(outcome, ...(res ? outcomeOf(res) : [banner.element.textContent ?? ""]));
  });
  return form;
}
