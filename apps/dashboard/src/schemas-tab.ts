import { SCHEMA_LIMITS, type EndpointJson, type SchemaFieldJson, type SchemaSummaryJson } from "@whc/api-model";
import { copy } from "./copy.js";
import { clear, h } from "./dom.js";
import { exactTime, plural, relativeTime } from "./format.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

/** The share of samples that had a path, as a person reads it: `100 %`, `99.6 %`, `< 0.1 %`. */
function percent(ratio: number): string {
  if (ratio >= 1) return "100 %";
  if (ratio > 0 && ratio < 0.001) return "< 0.1 %";
  return `${(Math.floor(ratio * 1000) / 10).toFixed(1)} %`;
}

/** A path present in so many samples that its absence is drift (design §19). */
const expected = (f: SchemaFieldJson) => f.presentRatio >= SCHEMA_LIMITS.expectedRatio;

function fieldRow(f: SchemaFieldJson): HTMLElement {
  return h(
    "tr",
    { "data-testid": "schema-field" },
    h("th", { scope: "row", class: "mono path-cell" }, f.path),
    h("td", {}, ...f.types.map((t) => h("span", { class: `chip type type-${t}` }, t))),
    h(
      "td",
      { class: "present" },
      // A meter, not a styled bar: the page's policy allows no inline style.
      h("meter", { class: "bar", min: "0", max: "1", value: String(f.presentRatio), "aria-hidden": "true" }),
      h("span", { class: expected(f) ? "" : "muted" }, percent(f.presentRatio)),
    ),
  );
}

/** One event type's schema: when it was seen, how often, its paths, and its JSON Schema. */
function schemaCard(ctx: AppContext, endpoint: EndpointJson, s: SchemaSummaryJson): HTMLElement {
  const copyButton = h("button", { type: "button", class: "btn small", "data-testid": "copy-json-schema", "data-label": "Copy JSON Schema" }, "Copy JSON Schema");
  copyButton.addEventListener("click", async () => {
    const schema = await ctx.banner.guarded(() => ctx.client.schemas.get(endpoint.id, s.eventType));
    if (schema) await copy(JSON.stringify(schema, null, 2), copyButton);
  });
  const drifted = ctx.href({ endpointId: endpoint.id, query: { drift: "true", ...(s.eventType === "*" ? {} : { type: s.eventType }) } });
  return h(
    "section",
    { class: "card schema", "data-testid": "schema", "data-event-type": s.eventType },
    h(
      "header",
      { class: "schema-head" },
      h("h3", { class: "mono" }, s.eventType === "*" ? "* (no event type)" : s.eventType),
      h("span", { class: "chip", "data-testid": "schema-samples" }, plural(s.samples, "sample")),
      h("span", { class: "hint" }, "last ", h("time", { datetime: s.lastSeenAt, title: exactTime(s.lastSeenAt) }, relativeTime(s.lastSeenAt)), ", first ", h("time", { datetime: s.firstSeenAt, title: exactTime(s.firstSeenAt) }, relativeTime(s.firstSeenAt))),
      h("span", { class: "row actions" }, h("a", { class: "btn small", href: drifted, "data-testid": "schema-drifted" }, "Drifted events"), copyButton),
    ),
    s.samples < SCHEMA_LIMITS.samplesBeforeDrift
      ? h("p", { class: "hint" }, `Captures are judged for drift once ${SCHEMA_LIMITS.samplesBeforeDrift} samples are learned (${s.samples} so far).`)
      : null,
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "kv schema-fields", "data-testid": "schema-fields" },
        h("caption", { class: "visually-hidden" }, `Paths of ${s.eventType}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Path"), h("th", { scope: "col" }, "Types"), h("th", { scope: "col" }, "Present"))),
        h("tbody", {}, ...s.fields.map(fieldRow)),
      ),
    ),
  );
}

const EMPTY =
  "Nothing learned yet. Every capture whose body is a JSON object is learned after it is stored: its paths, their types and how " +
  "often they are there, never a value. Once an event type has 20 samples, a capture that changes shape is flagged.";

function mount(ctx: AppContext, endpoint: EndpointJson): Mounted {
  const list = h("div", { class: "schemas", "data-testid": "schemas", "aria-busy": "true" }, h("p", { class: "hint" }, "Loading…"));
  const control = new AbortController();
  const refresh = h("button", { type: "button", class: "btn small", "data-testid": "schemas-refresh" }, "Refresh");

  async function load(): Promise<void> {
    list.setAttribute("aria-busy", "true");
    const page = await ctx.banner.guarded(() => ctx.client.schemas.list(endpoint.id, control.signal));
    if (control.signal.aborted) return;
    list.setAttribute("aria-busy", "false");
    if (!page) return;
    if (page.items.length === 0) return void clear(list, h("p", { class: "empty", "data-testid": "schemas-empty" }, EMPTY));
    clear(list, ...page.items.map((s) => schemaCard(ctx, endpoint, s)));
  }
  refresh.addEventListener("click", () => void load());
  void load();

  const element = h(
    "div",
    { class: "schemas-tab" },
    h(
      "div",
      { class: "row schemas-bar" },
      h("p", { class: "hint" }, "The shapes learned from this endpoint's JSON bodies, per event type: paths (an array's elements are ", h("code", {}, "[]"), ", keys that look like data ", h("code", {}, "*"), "), their types, and the share of captures that had them."),
      refresh,
    ),
    list,
  );
  return { element, dispose: () => control.abort() };
}

/** Schemas and drift (design §19): `#/endpoints/<id>/schemas`. */
export const schemasTab: EndpointTab = { segment: "schemas", label: "Schemas", mount };
