import { createHash, randomInt } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@whc/contracts";

export { normaliseIp, remoteIpOf } from "./remote-ip.js";

export const API_KEY_PATTERN = /^whc_[A-Za-z0-9]{32,}$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `whc_` and 40 base62 characters (about 238 bits) from the system CSPRNG. */
export function generateApiKey(): string {
  let out = "whc_";
  for (let i = 0; i < 40; i += 1) out += BASE62[randomInt(62)];
  return out;
}

/** Only this hash is stored or sent anywhere; the key itself is shown once. */
export function hashApiKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/** Enough of the key for a person to recognise it in a list, not enough to use it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 10);
}

/** WHC_BOOTSTRAP_API_KEYS: creates those accounts and keys, idempotently. */
export async function ensureBootstrapKeys(
  catalog: Client<typeof CatalogService>,
  pairs: readonly { name: string; value: string }[],
): Promise<number> {
  let created = 0;
  for (const { name, value } of pairs) {
    const res = await catalog.ensureApiKey({ accountName: name, keyHash: hashApiKey(value), prefix: keyPrefix(value), name: "bootstrap" });
    if (res.created) created += 1;
  }
  return created;
}

/**
 * All-in-one's first start: with no key at all, one account and its key are created and the
 * key is returned to be printed once.
 */
export async function ensureFirstKey(
  catalog: Client<typeof CatalogService>,
  accountName = "default",
): Promise<string | undefined> {
  const { active } = await catalog.countApiKeys({});
  if (active > 0) return undefined;
  const key = generateApiKey();
  await catalog.ensureApiKey({ accountName, keyHash: hashApiKey(key), prefix: keyPrefix(key), name: "first key" });
  return key;
}
