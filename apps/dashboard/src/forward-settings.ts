import { DESTINATION_DEFAULTS as DEFAULTS, isForwardingMode, OPERATING_MODES, type EndpointJson, type ForwardSettingsInput, type UpdateEndpointRequest } from "@whc/api-model";
import { h } from "./dom.js";

/** The operating mode and, for relay and proxy, where captures are forwarded (design §11). */
export interface ForwardFields {
  readonly element: HTMLElement;
  /** What differs from `ep`: the mode, and the forward settings when they changed. */
  changes(ep: EndpointJson): Pick<UpdateEndpointRequest, "operatingMode" | "forward">;
}

const MODE_HINTS: Record<(typeof OPERATING_MODES)[number], string> = {
  capture: "store each capture",
  metadata_only: "never store bodies",
  relay: "store, answer the sender, then deliver to the destination with retries",
  proxy: "store, forward at once and answer the sender with the destination's answer",
};



function targetSecretState(ep: EndpointJson): string {
  return ep.forward?.targetSecretSet
    ? "target secret set: signatures are recomputed with it"
    : "no target secret: the captured signatures are sent as they came";
}

export function forwardFields(ep: EndpointJson): ForwardFields {
  const f = ep.forward;
  const mode = h(
    "select",
    { name: "operatingMode", "data-testid": "edit-mode" },
    ...OPERATING_MODES.map((m) => h("option", { value: m, title: MODE_HINTS[m] }, m)),
  );
  mode.value = ep.operatingMode;
  const url = h("input", { type: "url", required: true, maxlength: "2048", placeholder: "https://app.example.com/hooks", value: f?.url ?? "", "data-testid": "edit-forward-url" });
  const keepPath = h("input", { type: "checkbox", checked: f?.keepPath ?? DEFAULTS.keepPath, "data-testid": "edit-forward-keep-path" });
  const timeoutMs = h("input", { type: "number", required: true, min: "100", max: "60000", step: "1", value: String(f?.timeoutMs ?? DEFAULTS.timeoutMs), "data-testid": "edit-forward-timeout" });
  const maxAttempts = h("input", { type: "number", required: true, min: "1", max: "20", step: "1", value: String(f?.maxAttempts ?? DEFAULTS.maxAttempts), "data-testid": "edit-forward-max-attempts" });
  const secret = h("input", { type: "password", autocomplete: "new-password", maxlength: "1024", placeholder: f?.targetSecretSet ? "set (type to replace)" : "target secret (re-sign)", "data-testid": "edit-forward-secret" });
  const removeSecret = h("input", { type: "checkbox", disabled: !f?.targetSecretSet, "data-testid": "edit-forward-remove-secret" });
  // Disabled while hidden: its required fields must not stop a capture endpoint's save.
  const settings = h(
    "fieldset",
    { class: "forward", "data-testid": "forward-settings" },
    h("legend", { class: "visually-hidden" }, "Forward to"),
    h("label", { class: "field" }, h("span", { class: "label" }, "Destination URL"), url),
    h("label", { class: "check" }, keepPath, h("span", {}, "Append the capture's sub-path and query")),
    h("label", { class: "field" }, h("span", { class: "label" }, "Timeout per attempt (ms)"), timeoutMs),
    h("label", { class: "field" }, h("span", { class: "label" }, "Attempts before giving up (relay)"), maxAttempts),
    h("label", { class: "field" }, h("span", { class: "label" }, "Target secret"), secret),
    h("p", { class: "hint", "data-testid": "forward-secret-state" }, targetSecretState(ep)),
    h("label", { class: "check" }, removeSecret, h("span", {}, "Remove the target secret")),
  );
  const hint = h("span", { class: "hint" });
  const showMode = () => {
    const on = isForwardingMode(mode.value);
    settings.hidden = !on;
    settings.disabled = !on;
    hint.textContent = MODE_HINTS[OPERATING_MODES.find((m) => m === mode.value) ?? "capture"];
  };
  mode.addEventListener("change", showMode);
  showMode();

  return {
    element: h("div", { class: "forward-fields" }, h("label", { class: "field" }, h("span", { class: "label" }, "Operating mode"), mode, hint), settings),
    changes(current) {
      const chosen = OPERATING_MODES.find((m) => m === mode.value) ?? current.operatingMode;
      const out: Pick<UpdateEndpointRequest, "operatingMode" | "forward"> = chosen !== current.operatingMode ? { operatingMode: chosen } : {};
      // Leaving relay or proxy keeps the stored destination for a later return.
      if (!isForwardingMode(chosen)) return out;
      const next: ForwardSettingsInput = {
        url: url.value.trim(),
        keepPath: keepPath.checked,
        timeoutMs: Number(timeoutMs.value),
        maxAttempts: Number(maxAttempts.value),
        ...(secret.value ? { targetSecret: secret.value } : removeSecret.checked ? { targetSecret: null } : {}),
      };
      const was = current.forward;
      const changed =
        !was || was.url !== next.url || was.keepPath !== next.keepPath || was.timeoutMs !== next.timeoutMs || was.maxAttempts !== next.maxAttempts || next.targetSecret !== undefined;
      return changed ? { ...out, forward: next } : out;
    },
  };
}
