import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { scenario, scenarioJsonSchema } from "./scenario.js";

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs");

describe("the scenario format of whc scenario", () => {
  const schema = scenarioJsonSchema();
  const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
  const example = {
    version: 1,
    provider: "stripe",
    events: [
      { offsetMs: 0, method: "POST", path: "", query: "", headers: { "Content-Type": ["application/json"] }, bodyBase64: Buffer.from("{}").toString("base64") },
      { offsetMs: 1500, method: "POST", path: "/sub", query: "a=1", headers: {}, bodyBase64: "" },
    ],
  };

  it("is documented by docs/scenario.schema.json, generated from the code (npm run docs:config-schema)", () => {
    expect(readFileSync(path.join(docs, "scenario.schema.json"), "utf8")).toBe(`${JSON.stringify(schema, null, 2)}\n`);
  });

  it("is read alike by the JSON Schema and by the CLI's own schema", () => {
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(scenario.safeParse(example).success).toBe(true);
    for (const bad of [
      { ...example, version: 2 },
      { ...example, events: [{ ...example.events[0], offsetMs: -1 }] },
      { ...example, events: [{ ...example.events[0], path: "no-slash" }] },
      { ...example, events: [{ ...example.events[0], bodyBase64: "not base64!" }] },
      { ...example, extra: true },
    ]) {
      expect(validate(bad)).toBe(false);
      expect(scenario.safeParse(bad).success).toBe(false);
    }
  });
});
