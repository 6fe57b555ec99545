import { z } from "zod";

/**
 * Building blocks of the /v1 shapes. This module and every schema module beside it import
 * nothing from Node: the dashboard bundles them for the browser.
 */
export const uuid = z.uuid({ version: undefined });
export const dateTime = z.iso.datetime({ offset: true });

/** Marks a field or route that goes beyond interface 0.1.0 (shown as `x-extension` in OpenAPI). */
export const extension = { "x-extension": true } as const;

/** A header name as RFC 9110 allows it (token characters), at most 100 of them. */
export const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/);

/** A provider's name: snake case. The gateway narrows it to the providers it knows. */
export const providerName = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/);

/** Something the caller should know that did not stop the request: before using an export or a replay (design §12), after saving a destination (§14). */
export const warning = z.object({ code: z.string(), message: z.string() });
export type Warning = z.infer<typeof warning>;

/**
 * A value the catalog stores as JSON (settings, counts), read with its schema: it was
 * validated when written, so what does not parse reads as none (undefined).
 */
export function storedJsonOf<S extends z.ZodType>(schema: S, json: string): z.output<S> | undefined {
  if (!json) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
