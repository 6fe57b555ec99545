import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { configFile, configFileJsonSchema } from "./config-file.js";

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs");

/** The example of docs/cli.md's `whc apply` section. */
function documentedExample(): unknown {
  const section = readFileSync(path.join(docs, "cli.md"), "utf8").split(/^## /m).find((s) => s.startsWith("`whc apply`"));
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/cli.md has no yaml example in its whc apply section");
  return parse(block);
}

describe("the file of whc apply", () => {
  const schema = configFileJsonSchema();
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

  it("is documented by docs/webhooks.schema.json, generated from the code (npm run docs:config-schema)", () => {
    expect(readFileSync(path.join(docs, "webhooks.schema.json"), "utf8")).toBe(`${JSON.stringify(schema, null, 2)}\n`);
  });

  it("reads docs/cli.md's example alike by the JSON Schema and by the CLI's own schema", () => {
    const example = documentedExample();
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(configFile.safeParse(example).success).toBe(true);
  });

  it("refuses alike, by both schemas, a key it does not know, a bad slug and a secret written in the file", () => {
    for (const bad of [
      { endpoints: [{ slug: "a", colour: "blue" }] },
      { endpoints: [{ slug: "Not A Slug" }] },
      { endpoints: [{ slug: "a", secret: "whsec_written_down" }] },
      { endpoints: [{ slug: "a", forward: { url: "https://example.com", targetSecret: "written" } }] },
      { alertChannels: [{ name: "x", type: "email", url: "https://example.com", events: ["test"] }] },
    ]) {
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
      expect(configFile.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
