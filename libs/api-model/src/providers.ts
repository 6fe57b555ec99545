import { z } from "zod";
import { extension } from "./common.js";

/** One signature scheme the service knows (`GET /v1/providers`), for pickers and docs. */
export const providerInfo = z.object({
  name: z.string(),
  label: z.string(),
  signs: z.string(),
  signatureHeaders: z.array(z.string()),
  toleranceSeconds: z.int().optional(),
  secretFormat: z.object({ description: z.string(), example: z.string().optional() }),
});
export type ProviderInfoJson = z.infer<typeof providerInfo>;

export const providerList = z.object({ items: z.array(providerInfo) }).meta({ ...extension });
export type ProviderListJson = z.infer<typeof providerList>;
