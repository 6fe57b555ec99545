import { diagnosisElement } from "./diagnosis.js";
import { h } from "./dom.js";
import type { AppContext, EventTab, EventView } from "./views.js";

function renderDiagnosis(ctx: AppContext, v: EventView): HTMLElement {
  const panel = diagnosisElement(v.detail.diagnostic, {
    responseCode: v.detail.responseCode,
    providerLabel: (name) => ctx.providers().find((p) => p.name === name)?.label,
  });
  return panel ?? h("p", { class: "empty", "data-testid": "no-diagnosis" }, "Nothing to diagnose: this capture was not checked against a signature scheme.");
}

export const diagnosisTab: EventTab = { segment: "diagnosis", label: () => "Diagnosis", render: renderDiagnosis };
