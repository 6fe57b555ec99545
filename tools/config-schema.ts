// Writes docs/webhooks.schema.json, the JSON Schema of whc apply's file, from its zod schema
// (npm run docs:config-schema). libs/api-model/src/config-file.test.ts fails when they differ.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { configFileJsonSchema } from "@whc/api-model";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(path.join(root, "docs", "webhooks.schema.json"), `${JSON.stringify(configFileJsonSchema(), null, 2)}\n`);
