import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "dist/**", ".nx/**", "libs/contracts/src/gen/**", "**/coverage/**", "apps/dashboard/dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
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
    files: ["apps/dashboard/src/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["**/*.test.ts", "tools/**"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" },
  },
);
