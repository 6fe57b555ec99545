// Bundles each app's main.ts (and the libs it imports through the @whc/* paths of
// tsconfig.base.json) into dist/<app>/main.js; npm packages stay external and load from
// node_modules, except in the CLI's bundle (see cliBuild) and the store's worker (storeWorkerBuild). Type checking is `npm run typecheck`'s job, not this one's.
import { build as esbuild } from "esbuild";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * esbuild, each output written to a file of its own and renamed into place: test runners build
 * the same apps at once, and a process started from a bundle half rewritten failed to parse it
 * (CI: "SyntaxError: Unexpected end of input" in dist/whc/main.js).
 */
async function build(options) {
  const result = await esbuild({ ...options, write: false });
  for (const file of result.outputFiles) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  return result;
}
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
// Apps that may run a destination's transform (relay, proxy, the destinations test) run it in
// @whc/transform-sandbox's threads, bundled beside main.js as transform-worker.js.
const WITH_TRANSFORM_WORKER = new Set(["all-in-one", "gateway", "ingest", "replay"]);

// The CLI is published on its own (apps/whc/package.json, copied beside its bundle): it carries
// every package it uses, so installing it needs no registry, except better-sqlite3 (native),
// which only `whc keys` on the embedded store loads.
const CLI = "whc";
// CommonJS packages inside an ESM bundle still call require() for Node's own modules.
const CLI_BANNER = '#!/usr/bin/env node\nimport { createRequire as __whcCreateRequire } from "node:module"; const require = __whcCreateRequire(import.meta.url);';

/**
 * better-sqlite3 is required where it is used, at run time, not imported at the top of the
 * bundle: the store's modules are reached only through whc keys' dynamic import, which esbuild
 * initialises lazily, so every other command runs where better-sqlite3 is not installed.
 */
const lateNativeModules = {
  name: "late-native-modules",
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) => ({ path: args.path, namespace: "late-native" }));
    b.onLoad({ filter: /.*/, namespace: "late-native" }, (args) => ({
      contents: `export default __whcCreateRequire(import.meta.url)(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

function serviceBuild(app, entry, out) {
  return build({
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
  });
}

/**
 * The store's worker carries its npm packages, except better-sqlite3 (native): a thread started
 * from one file compiles once instead of resolving and compiling each package's modules (about
 * 0.5 against 0.3 s of CPU per store opened, docs/performance.md). The options are
 * @whc/catalog-sqlite's worker-build.json, which also builds it from sources in tests.
 */
const SQLITE_WORKER_BUILD = JSON.parse(readFileSync(path.join(root, "libs/catalog-sqlite/src/worker-build.json"), "utf8"));
function storeWorkerBuild(app) {
  return build({
    entryPoints: [path.join(root, "libs/catalog-sqlite/src/sqlite-worker.ts")],
    outfile: path.join(root, "dist", app, "sqlite-worker.js"),
    ...SQLITE_WORKER_BUILD,
    sourcemap: true,
    tsconfig: path.join(root, "tsconfig.base.json"),
    logLevel: "warning",
  });
}

async function cliBuild() {
  const outdir = path.join(root, "dist", CLI);
  await build({
    entryPoints: [path.join(root, "apps", CLI, "src", "main.ts")],
    outfile: path.join(outdir, "main.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    plugins: [lateNativeModules],
    sourcemap: true,
    tsconfig: path.join(root, "tsconfig.base.json"),
    logLevel: "warning",
    banner: { js: CLI_BANNER },
  });
  copyFileSync(path.join(root, "apps", CLI, "package.json"), path.join(outdir, "package.json"));
}

await Promise.all(
  selected.flatMap((app) =>
    app === CLI
      ? [cliBuild()]
      : [
          ...(WITH_STORE_WORKER.has(app) ? [storeWorkerBuild(app)] : []),
          ...(WITH_TRANSFORM_WORKER.has(app) ? [serviceBuild(app, "libs/transform-sandbox/src/sandbox-worker.ts", "transform-worker.js")] : []),
          serviceBuild(app, `apps/${app}/src/main.ts`, "main.js"),
        ],
  ),
);

if (withDashboard) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({ configFile: path.join(root, "apps", "dashboard", "vite.config.ts"), logLevel: "warn" });
}
