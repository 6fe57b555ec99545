import type { SchemaDriftChangeJson } from "@whc/api-model";
import { diagnosisElement } from "./diagnosis.js";
import { h } from "./dom.js";
import type { AppContext, EventTab, EventView } from "./views.js";

/** One change, as a person reads it. */
function driftLine(c: SchemaDriftChangeJson): HTMLElement {
  const type = (t: string) => h("span", { class: "chip type" }, t);
  const what =
    c.change === "added"
      ? ["never seen before, now", type(c.now)]
      : c.change === "missing"
        ? ["absent, though nearly every sample had it as", ...c.seen.map(type)]
        : ["was", ...c.seen.map(type), "now", type(c.now)];
  return h("li", { "data-testid": "drift-change", "data-change": c.change }, h("code", { class: "mono" }, c.path), h("span", { class: `pill small drift-${c.change}` }, c.change.replace("_", " ")), ...what);
}

/** How the body departs from what its endpoint learned of its event type (design §19). */
function driftSection(ctx: AppContext, v: EventView): HTMLElement | null {
  const drift = v.detail.schemaDrift;
  if (!drift?.length) return null;
  return h(
    "section",
    { class: "card drift", "data-testid": "schema-drift" },
    h("h3", {}, "Schema drift"),
    h(
      "p",
      { class: "hint" },
      "This body's shape departs from what was learned of ",
      h("code", {}, v.detail.canonicalEventType ?? "*"),
      " on this endpoint. ",
      h("a", { href: ctx.href({ endpointId: v.endpoint.id, tab: "schemas", query: {} }) }, "See the schemas"),
    ),
    h("ul", { class: "drift-changes" }, ...drift.map(driftLine)),
  );
}

function renderDiagnosis(ctx: AppContext, v: EventView): HTMLElement {
  const panel = diagnosisElement(v.detail.diagnostic, {
    responseCode: v.detail.responseCode,
    providerLabel: (name) => ctx.providers().find((p) => p.name === name)?.label,
  });
  const drift = driftSection(ctx, v);
  const diagnosis = panel ?? h("p", { class: "empty", "data-testid": "no-diagnosis" }, "Nothing to diagnose: this capture was not checked against a signature scheme.");
  return drift ? h("div", { class: "stack" }, drift, diagnosis) : diagnosis;
}

export const diagnosisTab: EventTab = { segment: "diagnosis", label: () => "Diagnosis", render: renderDiagnosis };
