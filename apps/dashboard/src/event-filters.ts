import { DELIVERY_STATES, VERIFICATIONS, type FollowOptions } from "@whc/api-model";
import { h } from "./dom.js";

export interface Filters {
  search: string;
  status: (typeof VERIFICATIONS)[number] | "";
  eventType: string;
  /** The delivery's state; none: never forwarded. */
  forwardState: (typeof FORWARD_STATE_FILTERS)[number] | "";
  /** true: only events whose JSON body drifted from the learned schema (design §19); false: only the others. */
  drift: (typeof DRIFT_FILTERS)[number] | "";
  /** true: only duplicates (design §17's deduplication); false: only the others. */
  duplicate: (typeof DRIFT_FILTERS)[number] | "";
}

const FORWARD_STATE_FILTERS = [...DELIVERY_STATES, "none"] as const;
const DRIFT_FILTERS = ["true", "false"] as const;
const DRIFT_LABELS: Record<(typeof DRIFT_FILTERS)[number] | "", string> = { "": "Any shape", true: "Schema drift", false: "No drift" };
const DUPLICATE_LABELS: Record<(typeof DRIFT_FILTERS)[number] | "", string> = { "": "Duplicates too", true: "Duplicates only", false: "No duplicates" };

/** The filters' names in the address (`?q=refund&status=failed&type=invoice.paid&forward=failed`). */
const PARAMS = { search: "q", status: "status", eventType: "type", forwardState: "forward", drift: "drift", duplicate: "duplicate" } as const satisfies Record<keyof Filters, string>;

/** The filters a link names; a value that is not one of the choices is left out. */
export function filtersOf(query: Readonly<Record<string, string>>): Filters {
  return {
    search: query[PARAMS.search] ?? "",
    status: VERIFICATIONS.find((v) => v === query[PARAMS.status]) ?? "",
    eventType: query[PARAMS.eventType] ?? "",
    forwardState: FORWARD_STATE_FILTERS.find((v) => v === query[PARAMS.forwardState]) ?? "",
    drift: DRIFT_FILTERS.find((v) => v === query[PARAMS.drift]) ?? "",
    duplicate: DRIFT_FILTERS.find((v) => v === query[PARAMS.duplicate]) ?? "",
  };
}

/** The address's query for `f`: every filter, empty ones as "" (removed when applied). */
export function queryOf(f: Filters): Record<string, string> {
  return {
    [PARAMS.search]: f.search.trim(),
    [PARAMS.status]: f.status,
    [PARAMS.eventType]: f.eventType.trim(),
    [PARAMS.forwardState]: f.forwardState,
    [PARAMS.drift]: f.drift,
    [PARAMS.duplicate]: f.duplicate,
  };
}

export function anyFilter(f: Filters): boolean {
  return Object.keys(filterQuery(f)).length > 0;
}

/** The list's query parameters for `filters`; also what `follow` filters new captures by. */
export function filterQuery(f: Filters): NonNullable<FollowOptions["filters"]> {
  return {
    ...(f.search.trim() ? { search: f.search.trim() } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.eventType.trim() ? { eventType: f.eventType.trim() } : {}),
    ...(f.forwardState ? { forwardState: f.forwardState } : {}),
    ...(f.drift ? { schemaDrift: f.drift } : {}),
    ...(f.duplicate ? { duplicate: f.duplicate } : {}),
  };
}

export interface FilterForm {
  readonly element: HTMLFormElement;
  readonly search: HTMLInputElement;
  /** Shows `f` (the address's filters) without applying anything. */
  show(f: Filters): void;
}

function labelled(id: string, text: string, control: HTMLElement): HTMLElement[] {
  control.id = id;
  return [h("label", { class: "visually-hidden", for: id }, text), control];
}

/** Body search, verdict, event type, forward state, schema drift and duplicates; `onApply` gets them when the form is submitted. */
export function createFilterForm(onApply: (filters: Filters) => void): FilterForm {
  const search = h("input", { type: "search", placeholder: "Search bodies  ( / )", "data-testid": "search", autocomplete: "off", maxlength: "500" });
  const status = h("select", { "data-testid": "filter-status" }, ...["", ...VERIFICATIONS].map((v) => h("option", { value: v }, v || "Any verdict")));
  const eventType = h("input", { placeholder: "Event type", "data-testid": "filter-type", autocomplete: "off", maxlength: "200" });
  const forwardState = h(
    "select",
    { "data-testid": "filter-forward" },
    ...["", ...FORWARD_STATE_FILTERS].map((v) => h("option", { value: v }, v ? `Forward: ${v}` : "Any forward state")),
  );
  const drift = h("select", { "data-testid": "filter-drift" }, ...(["", ...DRIFT_FILTERS] as const).map((v) => h("option", { value: v }, DRIFT_LABELS[v])));
  const duplicate = h("select", { "data-testid": "filter-duplicate" }, ...(["", ...DRIFT_FILTERS] as const).map((v) => h("option", { value: v }, DUPLICATE_LABELS[v])));
  const apply = h("button", { type: "submit", class: "btn", "data-testid": "apply-filters" }, "Apply");
  const element = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter events" },
    h("span", { class: "search-box" }, ...labelled("filter-search", "Search event bodies", search)),
    ...labelled("filter-status-select", "Signature verdict", status),
    ...labelled("filter-type-input", "Event type", eventType),
    ...labelled("filter-forward-select", "Forward state", forwardState),
    ...labelled("filter-drift-select", "Schema drift", drift),
    ...labelled("filter-duplicate-select", "Duplicates", duplicate),
    apply,
  );
  element.addEventListener("submit", (e) => {
    e.preventDefault();
    onApply({
      search: search.value,
      status: VERIFICATIONS.find((v) => v === status.value) ?? "",
      eventType: eventType.value,
      forwardState: FORWARD_STATE_FILTERS.find((v) => v === forwardState.value) ?? "",
      drift: DRIFT_FILTERS.find((v) => v === drift.value) ?? "",
      duplicate: DRIFT_FILTERS.find((v) => v === duplicate.value) ?? "",
    });
  });
  return {
    element,
    search,
    show(f) {
      search.value = f.search;
      status.value = f.status;
      eventType.value = f.eventType;
      forwardState.value = f.forwardState;
      drift.value = f.drift;
      duplicate.value = f.duplicate;
    },
  };
}
