import type { ApiClient, EndpointJson, EventDetailJson, ProviderInfoJson } from "@whc/api-model";
import type { Banner } from "./banner.js";
import type { EndpointStore } from "./endpoint-store.js";
import type { Route } from "./router.js";

/**
 * What a view is given and what it gives back. A feature adds its view as one module exporting
 * one of the three kinds below, and one entry in routes.ts (docs/architecture.md, "The
 * dashboard's views"); the shell builds the navigation, the address and the panes from them.
 */

/** Things that happened, for the views that show them elsewhere (the list, the counts). */
export interface AppEvents {
  /** An event's detail was read: it is read now, with its current forward state. */
  "event-opened": EventDetailJson;
  "event-deleted": { endpointId: string; eventId: string };
  "endpoint-updated": EndpointJson;
  /** New captures were shown for this endpoint (its count is stale). */
  captured: { endpointId: string };
}

export interface AppContext {
  readonly client: ApiClient;
  readonly banner: Banner;
  readonly endpoints: EndpointStore;
  /** The providers GET /v1/providers lists (empty until it answered). */
  providers(): readonly ProviderInfoJson[];
  /** The same, once GET /v1/providers answered (empty when it failed). */
  providersLoaded(): Promise<readonly ProviderInfoJson[]>;
  /** Goes to `route` (a new history entry unless `replace`). */
  navigate(route: Partial<Route>, options?: { replace?: boolean }): void;
  /** The address of `route`, for links. */
  href(route: Partial<Route>): string;
  emit<K extends keyof AppEvents>(type: K, detail: AppEvents[K]): void;
  /** Listens until the returned function is called. */
  on<K extends keyof AppEvents>(type: K, listener: (detail: AppEvents[K]) => void): () => void;
}

/** A view on screen. `update` gets every later route that still shows it; `dispose` ends its calls. */
export interface Mounted {
  readonly element: HTMLElement;
  update?(route: Route): void;
  dispose?(): void;
}

/** An account-wide page: `#/<segment>` (the endpoint form, API keys, the audit log, alert channels). */
export interface PageView {
  readonly segment: string;
  readonly title: string;
  /** Its link in the header, when it has one (the endpoint form has its own button). */
  readonly navLabel?: string;
  mount(ctx: AppContext, route: Route): Mounted;
}

/** A tab of one endpoint: `#/endpoints/<id>/<segment>` (events, charts, destinations, listeners, schemas, settings). */
export interface EndpointTab {
  readonly segment: string;
  readonly label: string;
  /** True for the tab that lists the events: its link keeps the address's filters. */
  readonly withEvents?: boolean;
  mount(ctx: AppContext, endpoint: EndpointJson, route: Route): Mounted;
}

/** A tab of one event: `#/endpoints/<id>/events/<eventId>/<segment>` (body, headers...; diff, edit-and-replay later). */
export interface EventTab {
  readonly segment: string;
  /** The tab's label; it may count what the tab shows ("Headers 12"). */
  label(detail: EventDetailJson): string;
  render(ctx: AppContext, view: EventView): HTMLElement;
}

/** One event as its tabs see it. */
export interface EventView {
  readonly endpoint: EndpointJson;
  readonly detail: EventDetailJson;
  readonly route: Route;
  /** Reads the event again (after a redelivery) and shows the same tab. */
  reload(): Promise<void>;
}
