import { defineConfig } from "vite";
import path from "node:path";
import { fileURLToPath } from "node:url";
// The @whc/* libraries resolve to their sources as tsconfig.base.json maps them: one derivation, shared with the tests.
import { aliases } from "../../vitest.shared.js";

const here = path.dirname(fileURLToPath(import.meta.url));

// A static single page: the gateway serves dist/dashboard at `/`; it talks only to /v1.
export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  resolve: { alias: aliases },
  build: {
    outDir: path.resolve(here, "../../dist/dashboard"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    rollupOptions: {
      // The /v1 schemas build zod objects when their module loads; nothing else in api-model has
      // effects, so the page keeps only what it uses (the client, a few value lists), not zod.
      treeshake: { moduleSideEffects: (id) => !id.includes("/libs/api-model/") },
    },
  },
});
