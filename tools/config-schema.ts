// Writes the JSON Schemas of the files whc reads and writes, from their zod schemas
// (npm run docs:config-schema): docs/webhooks.schema.json (whc apply) and docs/scenario.schema.json
// (whc scenario). The tests beside those schemas in libs/api-model fail when they differ.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { configFileJsonSchema, scenarioJsonSchema } from "@whc/api-model";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(path.join(root, "docs", "webhooks.schema.json"), `${JSON.stringify(configFileJsonSchema(), null, 2)}\n`);
writeFileSync(path.join(root, "docs", "scenario.schema.json"), `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
