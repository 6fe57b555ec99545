import { DELIVERY_STATES, VERIFICATIONS, type FollowOptions } from "@whc/api-model";
import { h } from "./dom.js";

export interface Filters {
  search: string;
  status: (typeof VERIFICATIONS)[number] | "";
  eventType: string;
  /** The delivery's state; none: never forwarded. */
  forwardState: (typeof FORWARD_STATE_FILTERS)[number] | "";
}

const FORWARD_STATE_FILTERS = [...DELIVERY_STATES, "none"] as const;

export const NO_FILTERS: Filters = { search: "", status: "", eventType: "", forwardState: "" };

/** The list's query parameters for `filters`; also what `follow` filters new captures by. */
export function filterQuery(f: Filters): NonNullable<FollowOptions["filters"]> {
  return {
    ...(f.search.trim() ? { search: f.search.trim() } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.eventType.trim() ? { eventType: f.eventType.trim() } : {}),
    ...(f.forwardState ? { forwardState: f.forwardState } : {}),
  };
}

/** Body search, verdict, event type and forward state; `onApply` gets them when the form is submitted. */
export function createFilterForm(onApply: (filters: Filters) => void): HTMLFormElement {
  const search = h("input", { type: "search", placeholder: "search bodies", "data-testid": "search" });
  const status = h(
    "select",
    { "data-testid": "filter-status" },
    ...["", ...VERIFICATIONS].map((v) => h("option", { value: v }, v || "any verdict")),
  );
  const eventType = h("input", { placeholder: "event type", "data-testid": "filter-type" });
  const forwardState = h(
    "select",
    { "data-testid": "filter-forward" },
    ...["", ...FORWARD_STATE_FILTERS].map((v) => h("option", { value: v }, v ? `forward: ${v}` : "any forward state")),
  );
  const apply = h("button", { type: "submit", "data-testid": "apply-filters" }, "Apply");
  const form = h("form", { class: "filters" }, search, status, eventType, forwardState, apply);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    onApply({
      search: search.value,
      status: VERIFICATIONS.find((v) => v === status.value) ?? "",
      eventType: eventType.value,
      forwardState: FORWARD_STATE_FILTERS.find((v) => v === forwardState.value) ?? "",
    });
  });
  return form;
}
