import type { CatalogStore } from "./ports.js";

export type StoreMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * The same store with each of its methods replaced by `wrap(name, method)`, other properties
 * (its kind) kept: the one way decorators of the port (error translation, tracing) reach every
 * operation, present and future, without naming them.
 */
export function mapStoreMethods(store: CatalogStore, wrap: (name: string, method: StoreMethod) => StoreMethod): CatalogStore {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    wrapped[name] = typeof value === "function" ? wrap(name, value as StoreMethod) : value;
  }
  return wrapped as unknown as CatalogStore;
}
