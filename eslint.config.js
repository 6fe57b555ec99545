import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import nx from "@nx/eslint-plugin";

/**
 * Module boundaries on two tag axes (project.json `tags`), checked on every import:
 * - type: apps wire through the composition root; domain libs (services, ports, schemes) see
 *   only other domain libs, utilities and contracts; adapters implement domain ports; nothing
 *   but tests reaches the testing libs.
 * - scope: a service's libs see their own scope and `shared`; only the composition root
 *   (`scope:all`) sees every scope. The CLI reaches the catalog store directly for `whc keys`.
 */
const typeConstraints = [
  { sourceTag: "type:app", onlyDependOnLibsWithTags: ["type:composition", "type:domain", "type:adapter", "type:util", "type:contracts"] },
  { sourceTag: "type:composition", onlyDependOnLibsWithTags: ["type:domain", "type:adapter", "type:util", "type:contracts"] },
  { sourceTag: "type:domain", onlyDependOnLibsWithTags: ["type:domain", "type:util", "type:contracts"] },
  { sourceTag: "type:adapter", onlyDependOnLibsWithTags: ["type:domain", "type:util", "type:contracts"] },
  { sourceTag: "type:util", onlyDependOnLibsWithTags: ["type:util", "type:contracts"] },
  { sourceTag: "type:contracts", onlyDependOnLibsWithTags: ["type:contracts", "type:util"] },
  { sourceTag: "type:testing", onlyDependOnLibsWithTags: ["type:testing", "type:domain", "type:adapter", "type:util", "type:contracts"] },
  { sourceTag: "type:e2e", onlyDependOnLibsWithTags: ["*"] },
];
const scope = (name, ...more) => ({ sourceTag: `scope:${name}`, onlyDependOnLibsWithTags: [`scope:${name}`, "scope:shared", ...more] });
const scopeConstraints = [
  { sourceTag: "scope:shared", onlyDependOnLibsWithTags: ["scope:shared"] },
  { sourceTag: "scope:all", onlyDependOnLibsWithTags: ["*"] },
  ...["catalog", "crypto", "ingest", "gateway", "replay", "dashboard"].map((name) => scope(name)),
  ...["all-in-one", "catalog", "crypto", "ingest", "gateway", "replay"].map((name) => ({
    sourceTag: `scope:${name}`,
    onlyDependOnLibsWithTags: [`scope:${name}`, "scope:shared", "scope:all"],
  })),
  scope("cli", "scope:catalog"),
];

/** The allowed edges of one source tag are the union of its entries: merge them. */
function merged(constraints) {
  const bySource = new Map();
  for (const c of constraints) bySource.set(c.sourceTag, [...new Set([...(bySource.get(c.sourceTag) ?? []), ...c.onlyDependOnLibsWithTags])]);
  return [...bySource].map(([sourceTag, onlyDependOnLibsWithTags]) => ({ sourceTag, onlyDependOnLibsWithTags }));
}

const TEST_FILES = ["**/*.test.ts", "**/src/testing/**", "**/src/test-*.ts", "tools/**"];

export default tseslint.config(
  { ignores: ["**/node_modules/**", "dist/**", ".nx/**", "libs/contracts/src/gen/**", "**/coverage/**", "apps/dashboard/dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...nx.configs["flat/base"],
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["../../libs/*", "../../../libs/*", "@whc/*/src/*"], message: "Import libraries by their @whc/* name, not by path." }] },
      ],
    },
  },
  {
    files: ["**/*.ts"],
    rules: {
      "@nx/enforce-module-boundaries": [
        "error",
        {
          enforceBuildableLibDependency: false,
          allow: [],
          // catalog-core's service tests run over the real SQLite store, which implements
          // catalog-core's port: a test-only edge back. A production import stays refused by
          // the type constraint (a domain lib may not import an adapter).
          ignoredCircularDependencies: [["catalog-core", "catalog-sqlite"]],
          depConstraints: [...typeConstraints, ...merged(scopeConstraints)],
        },
      ],
    },
  },
  {
    // Tests and their support may build any real collaborator; they still may not import apps.
    files: TEST_FILES,
    rules: {
      "@nx/enforce-module-boundaries": [
        "error",
        {
          enforceBuildableLibDependency: false,
          allow: [],
          ignoredCircularDependencies: [["catalog-core", "catalog-sqlite"]],
          depConstraints: [{ sourceTag: "*", onlyDependOnLibsWithTags: ["type:domain", "type:adapter", "type:util", "type:contracts", "type:testing", "type:composition"] }],
        },
      ],
    },
  },
  {
    // A function longer than a screen or two is several named parts waiting to be found.
    files: ["libs/*/src/**/*.ts", "apps/*/src/**/*.ts"],
    ignores: TEST_FILES,
    rules: { "max-lines-per-function": ["error", { max: 150, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Build and test configuration is not product code.
    files: ["**/vitest.config.ts", "**/vite.config.ts"],
    rules: { "@nx/enforce-module-boundaries": "off" },
  },
  {
    // The public /v1 shapes and client run in browsers: nothing from Node but the server-side presenters.
    files: ["libs/api-model/src/**/*.ts"],
    ignores: ["libs/api-model/src/present/**", "**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["node:*", "@whc/*", "!@whc/api-model"], message: "@whc/api-model is browser-safe: no Node or internal imports outside present/." }] }],
    },
  },
  {
    files: ["apps/dashboard/src/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["**/*.test.ts", "tools/**"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" },
  },
);
