import type { AppError } from "@whc/errors";
import type { CatalogStore } from "./ports.js";

type Method = (...args: unknown[]) => Promise<unknown>;

/**
 * The same store, each of its methods throwing only AppErrors: `translate` names the driver's
 * errors (the port's promise that adapters speak domain reasons, kept in one place).
 */
export function translatingErrors(store: CatalogStore, translate: (err: unknown, method: string) => AppError): CatalogStore {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== "function") {
      wrapped[name] = value;
      continue;
    }
    const method = value as Method;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method(...args);
      } catch (err) {
        throw translate(err, name);
      }
    };
  }
  return wrapped as unknown as CatalogStore;
}
