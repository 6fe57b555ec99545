// Bundles each app's main.ts (and the libs it imports through the @whc/* paths of
// tsconfig.base.json) into dist/<app>/main.js; npm packages stay external and load from
// node_modules. Type checking is `npm run typecheck`'s job, not this one's.
import { build } from "esbuild";
import { readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The dashboard is a browser page built by Vite; every other app is a Node bundle.
const apps = readdirSync(path.join(root, "apps")).filter(
  (name) => name !== "dashboard" && existsSync(path.join(root, "apps", name, "src", "main.ts")),
);
const args = process.argv.slice(2).filter((a) => a !== "--no-dashboard");
const wanted = args.filter((a) => a !== "dashboard");
const selected = wanted.length ? apps.filter((a) => wanted.includes(a)) : apps;
if (wanted.length && selected.length !== wanted.length) {
  console.error(`unknown app: ${wanted.filter((w) => !apps.includes(w)).join(", ")} (known: ${apps.join(", ")}, dashboard)`);
  process.exit(2);
}
// The gateway serves the dashboard, so building it (or all-in-one) builds the page too.
// (--no-dashboard: tests that only need the services, built concurrently by several runners.)
const withDashboard =
  !process.argv.includes("--no-dashboard") && (args.length === 0 || args.some((a) => ["dashboard", "gateway", "all-in-one"].includes(a)));

// Apps that open the embedded store run it on a worker thread, bundled beside main.js.
const WITH_STORE_WORKER = new Set(["all-in-one", "catalog"]);

await Promise.all(
  selected.flatMap((app) => [
    ...(WITH_STORE_WORKER.has(app) ? [[app, "libs/catalog-sqlite/src/sqlite-worker.ts", "sqlite-worker.js"]] : []),
    [app, `apps/${app}/src/main.ts`, "main.js"],
  ]).map(([app, entry, out]) =>
    build({
      entryPoints: [path.join(root, entry)],
      outfile: path.join(root, "dist", app, out),
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      packages: "external",
      sourcemap: true,
      tsconfig: path.join(root, "tsconfig.base.json"),
      logLevel: "warning",
      banner: app === "whc" && out === "main.js" ? { js: "#!/usr/bin/env node" } : {},
    }),
  ),
);

if (withDashboard) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({ configFile: path.join(root, "apps", "dashboard", "vite.config.ts"), logLevel: "warn" });
}
