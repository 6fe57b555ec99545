import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, it, expect } from "vitest";
import { settings } from "./settings.js";

const README = fileURLToPath(new URL("../../../README.md", import.meta.url));

/** A default as the table writes it: `text`, or a word for none. */
function shown(defaultText: string | undefined): string {
  if (defaultText === undefined) return "unset";
  return defaultText === "" ? "empty" : `\`${defaultText}\``;
}

/**
 * The rows of the "## Configuration" table as variable -> default. A row may group
 * variables, `A` / `B`, with one default for all or one each, `1` / `2`.
 */
function configurationTable(markdown: string): Map<string, string> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith("Configuration\n"));
  if (!section) throw new Error("README.md has no ## Configuration section");
  const table = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (!cells[1]?.startsWith("`WHC_")) continue;
    const names = cells[1].split(" / ").map((n) => n.replace(/`/g, ""));
    const defaults = (cells[2] ?? "").split(" / ");
    if (defaults.length !== 1 && defaults.length !== names.length) {
      throw new Error(`README row ${cells[1]}: ${defaults.length} defaults for ${names.length} variables`);
    }
    names.forEach((name, i) => {
      if (table.has(name)) throw new Error(`README lists ${name} twice`);
      table.set(name, (defaults.length === 1 ? defaults[0] : defaults[i]) as string);
    });
  }
  return table;
}

describe("README configuration table", () => {
  it("lists exactly the variables of settings, each with its default", () => {
    const table = configurationTable(readFileSync(README, "utf8"));
    const expected = new Map(Object.values(settings).map((s) => [s.name, shown(s.defaultText)]));
    expect(Object.fromEntries(table)).toEqual(Object.fromEntries(expected));
  });
});
