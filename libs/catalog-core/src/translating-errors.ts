import type { AppError } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import { mapStoreMethods } from "./store-methods.js";

/**
 * The same store, each of its methods throwing only AppErrors: `translate` names the driver's
 * errors (the port's promise that adapters speak domain reasons, kept in one place).
 */
export function translatingErrors(store: CatalogStore, translate: (err: unknown, method: string) => AppError): CatalogStore {
  return mapStoreMethods(store, (name, method) => async (...args: unknown[]) => {
    try {
      return await method(...args);
    } catch (err) {
      throw translate(err, name);
    }
  });
}
