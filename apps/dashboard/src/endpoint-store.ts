import type { ApiClient, EndpointJson } from "@whc/api-model";
import type { Banner } from "./banner.js";

/**
 * Every endpoint of the account, as GET /v1/endpoints lists them, page after page (the
 * client follows nextAfter; an account holds at most WHC_QUOTA_ENDPOINTS of them). The one
 * function that lists them.
 */
export async function loadEndpoints(client: ApiClient, signal?: AbortSignal): Promise<EndpointJson[]> {
  return client.endpoints.all(signal);
}

export interface EndpointStore {
  /** The endpoints as last loaded, newest list order. */
  items(): readonly EndpointJson[];
  /** Loads the list again; false when that failed (the banner says why). */
  load(): Promise<boolean>;
  /** One endpoint: from the list, else asked of the API (a linked endpoint past a page). */
  get(id: string): Promise<EndpointJson | undefined>;
  /** Puts an endpoint the API answered into the list, without a call. */
  put(endpoint: EndpointJson): void;
  remove(id: string): void;
  /** Told after every change of the list. */
  subscribe(listener: () => void): () => void;
}

export function createEndpointStore(client: ApiClient, banner: Banner): EndpointStore {
  let items: EndpointJson[] = [];
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((l) => l());
  let loading: Promise<boolean> | undefined;

  async function load(): Promise<boolean> {
    // Captures arriving in bursts ask for many reloads: one call in flight serves them all.
    loading ??= banner.guarded(() => loadEndpoints(client)).then((list) => {
      loading = undefined;
      if (!list) return false;
      items = list;
      changed();
      return true;
    });
    return loading;
  }

  return {
    items: () => items,
    load,
    async get(id) {
      const known = items.find((e) => e.id === id);
      if (known) return known;
      return banner.guarded(() => client.endpoints.get(id));
    },
    put(endpoint) {
      const at = items.findIndex((e) => e.id === endpoint.id);
      items = at < 0 ? [endpoint, ...items] : items.map((e) => (e.id === endpoint.id ? endpoint : e));
      changed();
    },
    remove(id) {
      items = items.filter((e) => e.id !== id);
      changed();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
