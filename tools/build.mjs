// Bundles each app's main.ts (and the libs it imports through the @whc/* paths of
// tsconfig.base.json) into dist/<app>/main.js; npm packages stay external and load from
// node_modules. Type checking is `npm run typecheck`'s job, not this one's.
import { build } from "esbuild";
import { readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const apps = readdirSync(path.join(root, "apps")).filter((name) => existsSync(path.join(root, "apps", name, "src", "main.ts")));
const wanted = process.argv.slice(2);
const selected = wanted.length ? apps.filter((a) => wanted.includes(a)) : apps;
if (wanted.length && selected.length !== wanted.length) {
  console.error(`unknown app: ${wanted.filter((w) => !apps.includes(w)).join(", ")} (known: ${apps.join(", ")})`);
  process.exit(2);
}

await Promise.all(
  selected.map((app) =>
    build({
      entryPoints: [path.join(root, "apps", app, "src", "main.ts")],
      outfile: path.join(root, "dist", app, "main.js"),
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      packages: "external",
      sourcemap: true,
      tsconfig: path.join(root, "tsconfig.base.json"),
      logLevel: "warning",
      banner: app === "whc" ? { js: "#!/usr/bin/env node" } : {},
    }),
  ),
);
