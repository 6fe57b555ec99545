import { describe, it, expect } from "vitest";
import { API_KEY_PATTERN, generateApiKey, hashApiKey, keyPrefix } from "./index.js";

describe("API keys", () => {
  it("are whc_ and 40 base62 characters, never twice the same", () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(API_KEY_PATTERN);
    expect([...keys][0]).toHaveLength(44);
  });

  it("are stored as SHA-256 hashes and shown by a short prefix", () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toHaveLength(32);
    expect(hashApiKey(key).equals(hashApiKey(key))).toBe(true);
    expect(keyPrefix(key)).toBe(key.slice(0, 10));
  });
});
