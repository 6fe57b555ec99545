import { REPLAY_MODES, type EndpointJson, type ReplayEditsJson, type ReplayRequest, type ReplayResultJson } from "@whc/api-model";
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
      res.edited ? " · edited" : "",
    ),
    res.request_sha256 ? h("p", { class: "hint mono", "data-testid": "replay-sha256" }, `Body sent: SHA-256 ${res.request_sha256}`) : null,
    warningsElement(res.warnings, "replay-warnings"),
    excerpt ? h("pre", { class: "code wrap excerpt" }, excerpt, res.excerpt_truncated ? "\n…" : "") : null,
  ];
}

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

/** The edit controls of the replay dialog (design §19): headers set and removed, one body edit. */
function editControls(disabled: boolean) {
  const setHeaders = h("textarea", { rows: "2", maxlength: "20000", placeholder: "X-Env: staging", "data-testid": "edit-set-headers", disabled });
  const removeHeaders = h("input", { type: "text", maxlength: "2000", placeholder: "x-request-id, user-agent", "data-testid": "edit-remove-headers", disabled });
  const bodyKind = h(
    "select",
    { "data-testid": "edit-body-kind", disabled },
    h("option", { value: "" }, "Keep the body"),
    h("option", { value: "body" }, "Replace the body (text)"),
    h("option", { value: "jsonMergePatch" }, "JSON merge patch"),
  );
  const bodyValue = h("textarea", { rows: "4", maxlength: "1048576", placeholder: '{"data": {"object": {"amount": 500}}}', "data-testid": "edit-body", disabled });
  const element = h(
    "details",
    { class: "edits", "data-testid": "replay-edits" },
    h("summary", {}, "Edit before sending"),
    field("Set headers", setHeaders, "One `Name: value` per line; replaces every captured value of that name."),
    field("Remove headers", removeHeaders, "Names, separated by commas."),
    field("Body", bodyKind),
    field("New body or patch", bodyValue, "With resign, the edited bytes are signed afresh."),
  );
  /** The edits entered, undefined when none; throws with a message a person can act on. */
  function read(): ReplayEditsJson | undefined {
    const set: Record<string, string> = {};
    for (const [i, line] of setHeaders.value.split("\n").entries()) {
      if (!line.trim()) continue;
      const colon = line.indexOf(":");
      if (colon <= 0) throw new Error(`Set headers, line ${i + 1}: write it as Name: value`);
      set[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
    const remove = removeHeaders.value.split(",").map((n) => n.trim()).filter(Boolean);
    const headers = Object.keys(set).length || remove.length ? { ...(Object.keys(set).length ? { set } : {}), ...(remove.length ? { remove } : {}) } : undefined;
    let body: Pick<ReplayEditsJson, "body" | "jsonMergePatch"> = {};
    if (bodyKind.value === "body") body = { body: bodyValue.value };
    if (bodyKind.value === "jsonMergePatch") {
      let patch: unknown;
      try {
        patch = JSON.parse(bodyValue.value);
      } catch {
        throw new Error("The JSON merge patch is not JSON");
      }
      if (typeof patch !== "object" || patch === null || Array.isArray(patch)) throw new Error("A JSON merge patch is an object");
      body = { jsonMergePatch: patch as Record<string, unknown> };
    }
    return headers || Object.keys(body).length ? { ...(headers ? { headers } : {}), ...body } : undefined;
  }
  return { element, read };
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
  const edits = editControls(disabled);
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
    edits.element,
    h("div", { class: "row" }, send, close),
    outcome,
  );
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": `replay-title-${eventId}`, "data-testid": "replay-dialog" }, form);
  close.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(outcome, "Sending…");
    sessionStorage.setItem("whc.replayTarget", target.value);
    let edited: ReplayEditsJson | undefined;
    try {
      edited = edits.read();
    } catch (err) {
      clear(outcome, h("p", { class: "problem", "data-testid": "replay-edit-problem" }, (err as Error).message));
      return;
    }
    const body: ReplayRequest = {
      target_url: target.value,
      ...(mode.value ? { mode: REPLAY_MODES.find((m) => m === mode.value) } : {}),
      ...(secret.value ? { target_secret: secret.value } : {}),
      ...(edited ? { edits: edited } : {}),
    };
    send.disabled = true;
    const started = performance.now();
    const res = await ctx.banner.guarded(() => ctx.client.events.replay(endpoint.id, eventId, body));
    send.disabled = false;
    clear(outcome, ...(res ? outcomeOf(res) : [h("p", { class: "problem" }, ctx.banner.element.textContent || `Failed after ${duration(performance.now() - started)}`)]));
  });
  return dialog;
}
