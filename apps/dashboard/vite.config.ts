import { defineConfig } from "vite";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

// A static single page: the gateway serves dist/dashboard at `/`; it talks only to /v1.
export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  build: {
    outDir: path.resolve(here, "../../dist/dashboard"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
  },
});
