import { VERIFICATIONS, type FollowOptions } from "@whc/api-model";
import { h } from "./dom.js";

export interface Filters {
  search: string;
  status: (typeof VERIFICATIONS)[number] | "";
  eventType: string;
}

export const NO_FILTERS: Filters = { search: "", status: "", eventType: "" };

/** The list's query parameters for `filters`; also what `follow` filters new captures by. */
export function filterQuery(f: Filters): NonNullable<FollowOptions["filters"]> {
  return {
    ...(f.search.trim() ? { search: f.search.trim() } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.eventType.trim() ? { eventType: f.eventType.trim() } : {}),
  };
}

/** Body search, verdict and event type; `onApply` gets them when the form is submitted. */
export function createFilterForm(onApply: (filters: Filters) => void): HTMLFormElement {
  const search = h("input", { type: "search", placeholder: "search bodies", "data-testid": "search" });
  const status = h(
    "select",
    { "data-testid": "filter-status" },
    ...["", ...VERIFICATIONS].map((v) => h("option", { value: v }, v || "any verdict")),
  );
  const eventType = h("input", { placeholder: "event type", "data-testid": "filter-type" });
  const form = h("form", { class: "filters" }, search, status, eventType, h("button", { type: "submit", "data-testid": "apply-filters" }, "Apply"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    onApply({ search: search.value, status: VERIFICATIONS.find((v) => v === status.value) ?? "", eventType: eventType.value });
  });
  return form;
}
