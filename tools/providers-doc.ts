// Writes docs/providers.md from the provider registry (npm run docs:providers).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { providersDoc } from "@whc/signatures";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(path.join(root, "docs", "providers.md"), providersDoc());
