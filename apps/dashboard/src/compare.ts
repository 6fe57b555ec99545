import type { EndpointJson, EventDiffChangeJson, EventDiffJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import type { AppContext } from "./views.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A change's value as one line of text: JSON for anything but a string. */
function shown(v: unknown): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function changesTable(changes: readonly EventDiffChangeJson[]): HTMLElement {
  return h(
    "table",
    { class: "list-table diff", "data-testid": "diff-changes" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Change"), h("th", { scope: "col" }, "Path"), h("th", { scope: "col" }, "This event"), h("th", { scope: "col" }, "Other event"))),
    h(
      "tbody",
      {},
      ...changes.map((c) =>
        h(
          "tr",
          { class: `diff-${c.op}`, "data-testid": "diff-change" },
          h("td", {}, c.op),
          h("td", { class: "mono" }, c.path),
          h("td", { class: "mono wrap" }, shown(c.from)),
          h("td", { class: "mono wrap" }, shown(c.to)),
        ),
      ),
    ),
  );
}

function outcomeOf(d: EventDiffJson): HTMLElement[] {
  if (d.same) return [h("p", { "data-testid": "diff-same" }, "The two requests are the same", d.bodyKind === "binary" ? " (binary bodies: same size and SHA-256)." : ".")];
  return [
    h("p", {}, `${d.changes.length}${d.truncated ? "+" : ""} change${d.changes.length === 1 ? "" : "s"}; bodies compared as ${d.bodyKind}.`),
    changesTable(d.changes),
  ];
}

/**
 * Compare this event with another of the account (design §19, `GET .../diff`): method, path,
 * query, headers and body, JSON structurally, text by lines; paths to leave out, such as
 * headers that always differ.
 */
export function compareDialog(ctx: AppContext, endpoint: EndpointJson, eventId: string): HTMLDialogElement {
  const other = h("input", { type: "text", required: true, maxlength: "36", placeholder: "the other event's id", "data-testid": "diff-with", spellcheck: "false" });
  const ignore = h("input", { type: "text", maxlength: "2000", value: "headers.date,headers.x-request-id", "data-testid": "diff-ignore" });
  const outcome = h("div", { class: "outcome", role: "status", "data-testid": "diff-outcome" });
  const run = h("button", { type: "submit", class: "btn primary", "data-testid": "diff-run" }, "Compare");
  const close = h("button", { type: "button", class: "btn ghost" }, "Close");
  const form = h(
    "form",
    { class: "form", method: "dialog" },
    h("h2", { id: `diff-title-${eventId}` }, "Compare with another event"),
    h("p", { class: "hint" }, "Any event of your endpoints: its id ends its link (Copy link on its pane)."),
    h("label", { class: "field" }, h("span", { class: "label" }, "Other event"), other),
    h("label", { class: "field" }, h("span", { class: "label" }, "Leave out"), ignore, h("span", { class: "hint" }, "Dotted paths, separated by commas: headers.date, body.created, query.")),
    h("div", { class: "row" }, run, close),
    outcome,
  );
  const dialog = h("dialog", { class: "dialog wide", "aria-labelledby": `diff-title-${eventId}`, "data-testid": "diff-dialog" }, form);
  close.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const id = other.value.trim();
    if (!UUID.test(id)) return void clear(outcome, h("p", { class: "problem" }, "An event id looks like 0190a1b2-…: 36 characters."));
    clear(outcome, "Comparing…");
    run.disabled = true;
    const d = await ctx.banner.guarded(() => ctx.client.events.diff(endpoint.id, eventId, { with: id, ...(ignore.value.trim() ? { ignore: ignore.value } : {}) }));
    run.disabled = false;
    clear(outcome, ...(d ? outcomeOf(d) : [h("p", { class: "problem" }, ctx.banner.element.textContent || "The comparison failed.")]));
  });
  return dialog;
}
