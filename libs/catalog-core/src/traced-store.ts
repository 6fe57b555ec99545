import { SpanKind } from "@opentelemetry/api";
import { currentRequestId } from "@whc/logging";
import { ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME, ATTR_WHC_REQUEST_ID, inSpan, tracingActive } from "@whc/telemetry";
import type { CatalogStore } from "./ports.js";
import { mapStoreMethods } from "./store-methods.js";

/**
 * The same store with a span per operation (`CatalogStore.<method>`: `db.system.name` is the
 * store's kind, `db.operation.name` the method, `whc.request_id` the request it serves),
 * built from the store's own methods so that every operation of the port, present and
 * future, is traced by this one wrapper rather than in each adapter.
 *
 * Without tracing (tracingActive() false when the store is opened) the store is returned
 * as it is: the capture path pays nothing.
 */
export function tracedStore(store: CatalogStore): CatalogStore {
  if (!tracingActive()) return store;
  return mapStoreMethods(store, (name, method) => {
    const spanName = `CatalogStore.${name}`;
    return (...args: unknown[]) => {
      const requestId = currentRequestId();
      const attributes = {
        [ATTR_DB_SYSTEM_NAME]: store.kind,
        [ATTR_DB_OPERATION_NAME]: name,
        ...(requestId ? { [ATTR_WHC_REQUEST_ID]: requestId } : {}),
      };
      return inSpan(spanName, { kind: SpanKind.CLIENT, attributes }, () => method(...args));
    };
  });
}
