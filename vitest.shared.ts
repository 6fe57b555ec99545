import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineProject, type UserWorkspaceConfig } from "vitest/config";

const root = path.dirname(fileURLToPath(import.meta.url));
const tsconfig = JSON.parse(readFileSync(path.join(root, "tsconfig.base.json"), "utf8")) as {
  compilerOptions: { paths: Record<string, string[]> };
};

/**
 * The @whc/* libraries resolve to their sources, exactly as tsconfig.base.json maps them.
 * Exact-match patterns, so "@whc/x" never captures "@whc/x/testing".
 */
export const aliases = Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => ({
  find: new RegExp(`^${name.replace(/[/-]/g, "\\$&")}$`),
  replacement: path.join(root, target as string),
}));

/** One vitest config per nx project: `vitest run` in the project folder runs its tests. */
export function projectConfig(name: string, overrides: UserWorkspaceConfig["test"] = {}) {
  return defineProject({
    resolve: { alias: aliases },
    test: {
      name,
      include: ["src/**/*.test.ts", "*.test.ts"],
      environment: "node",
      testTimeout: 20_000,
      hookTimeout: 30_000,
      // The files of a project share their workers' module graph: each file importing the
      // libraries (and the providers' SDKs) afresh cost more CPU than the tests themselves in
      // CI (signatures: 36 s of imports for 4 s of tests). Test files keep no state in modules;
      // a project whose files would disturb one another sets isolate back to true.
      isolate: false,
      ...overrides,
    },
  });
}
