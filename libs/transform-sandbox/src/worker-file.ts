import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as Esbuild from "esbuild";

/** The name tools/build.mjs gives the bundled sandbox thread, beside each app's main.js. */
export const WORKER_BUNDLE = "transform-worker.js";

let sourceWorker: Promise<URL> | undefined;

/**
 * The sandbox thread's script: the bundle beside dist/<app>/main.js, or, when running from
 * sources (tests, `tsx`), sandbox-worker.ts bundled once by esbuild (a development dependency)
 * under node_modules/.cache, named by its content, as the SQLite store's thread is.
 */
export function workerFile(): Promise<URL> {
  const bundled = new URL(`./${WORKER_BUNDLE}`, import.meta.url);
  if (bundled.protocol === "file:" && existsSync(fileURLToPath(bundled))) return Promise.resolve(bundled);
  return (sourceWorker ??= bundleSourceWorker());
}

async function bundleSourceWorker(): Promise<URL> {
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  // Not a literal: an app's bundle of this module must not pull esbuild in.
  const esbuildPackage = "esbuild";
  const esbuild = (await import(esbuildPackage)) as typeof Esbuild;
  const out = await esbuild.build({
    entryPoints: [fileURLToPath(new URL("./sandbox-worker.ts", import.meta.url))],
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: path.join(root, "tsconfig.base.json"),
    logLevel: "warning",
  });
  const code = out.outputFiles[0]!.contents;
  const dir = path.join(root, "node_modules", ".cache", "whc");
  const target = path.join(dir, `transform-worker-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${target}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, code);
    renameSync(partial, target);
  }
  return pathToFileURL(target);
}

let compiled: Promise<WebAssembly.Module | undefined> | undefined;

/** The global WebAssembly object (the project's `lib` has only its types, not the DOM's value). */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly;

/**
 * QuickJS's WebAssembly, compiled once per process and handed to every sandbox thread: a
 * WebAssembly.Module sent to a worker shares its machine code, including what V8 optimised while
 * earlier threads ran. A thread of its own compiling it paid 120-170 ms of CPU to start and ran its
 * first transforms 5-10 times slower; sharing it, a new thread started with about 45 ms (ADR 0075).
 * The file is found as quickjs-emscripten finds it (its release-sync variant); undefined when it
 * cannot be, and each thread then loads its own.
 */
export function quickJSModule(): Promise<WebAssembly.Module | undefined> {
  return (compiled ??= (async () => {
    try {
      const fromQuickJS = createRequire(createRequire(import.meta.url).resolve("quickjs-emscripten"));
      return await wasm.compile(await readFile(fromQuickJS.resolve("@jitl/quickjs-wasmfile-release-sync/wasm")));
    } catch {
      return undefined;
    }
  })());
}
