import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { providersDoc } from "./providers-doc.js";
import { PROVIDER_NAMES } from "./registry.js";

const page = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/providers.md");

describe("docs/providers.md", () => {
  it("is the registry's table (run `npm run docs:providers` after adding a provider)", () => {
    expect(readFileSync(page, "utf8")).toBe(providersDoc());
  });

  it("has a row for every provider", () => {
    const text = providersDoc();
    for (const name of PROVIDER_NAMES) expect(text).toContain(`| \`${name}\` |`);
  });
});
