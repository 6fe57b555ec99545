import { MAX_DEDUPE_FIELDS, MAX_DEDUPE_WINDOW_SECONDS, type DedupeSettings, type EndpointJson, type UpdateEndpointRequest } from "@whc/api-model";
import { h } from "./dom.js";

/** Deduplication (design §17): the provider's own id or named fields, within a window. */
export interface DedupeFields {
  readonly element: HTMLElement;
  /** What differs from `ep`: the whole setting when it changed, null when turned off. */
  changes(ep: EndpointJson): Pick<UpdateEndpointRequest, "dedupe">;
}

const KINDS = [
  ["", "Off: every capture is forwarded"],
  ["auto", "The provider's own delivery or event id"],
  ["fields", "Fields I name"],
] as const;

function labelled(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

/** Entries separated by commas, spaces or lines. */
function list(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function dedupeFields(ep: EndpointJson): DedupeFields {
  const d = ep.dedupe;
  const kind = h("select", { "data-testid": "edit-dedupe-kind" }, ...KINDS.map(([value, text]) => h("option", { value }, text)));
  kind.value = d?.fields ? "fields" : d ? "auto" : "";
  const fields = h("input", { autocomplete: "off", spellcheck: "false", placeholder: "header.x-request-id, body.id", value: (d?.fields ?? []).join(", "), "data-testid": "edit-dedupe-fields" });
  const windowSeconds = h("input", { type: "number", min: "1", max: String(MAX_DEDUPE_WINDOW_SECONDS), step: "1", value: String(d?.windowSeconds ?? 3600), "data-testid": "edit-dedupe-window" });
  const fieldsRow = labelled("Fields", fields, `Up to ${MAX_DEDUPE_FIELDS}: header.<name>, query.<name>, body.<member>[.<member>…]; together they make the key.`);
  const windowRow = labelled("Window (seconds)", windowSeconds, "A capture with a key seen this long ago or less is a duplicate: stored and answered, not forwarded.");
  const show = () => {
    fieldsRow.hidden = kind.value !== "fields";
    windowRow.hidden = kind.value === "";
  };
  kind.addEventListener("change", show);
  show();

  return {
    element: h(
      "div",
      { class: "dedupe-fields", "data-testid": "dedupe-settings" },
      ep.operatingMode === "proxy" ? h("p", { class: "hint" }, "A proxy endpoint answers with its destination's answer, so it does not deduplicate.") : null,
      labelled("Duplicates by", kind),
      fieldsRow,
      windowRow,
    ),
    changes(current) {
      if (kind.value === "") return current.dedupe ? { dedupe: null } : {};
      const next: DedupeSettings =
        kind.value === "fields" ? { windowSeconds: Number(windowSeconds.value), fields: list(fields.value) } : { windowSeconds: Number(windowSeconds.value), key: "auto" };
      const was = current.dedupe;
      const same = was !== undefined && was.windowSeconds === next.windowSeconds && was.key === next.key && (was.fields ?? []).join(",") === (next.fields ?? []).join(",");
      return same ? {} : { dedupe: next };
    },
  };
}
