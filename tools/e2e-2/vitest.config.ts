import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineProject } from "vitest/config";
import { aliases } from "../../vitest.shared.js";
import { SECOND_HALF } from "../e2e/second-half.js";

const e2e = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../e2e");

// The second half of tools/e2e's files (SECOND_HALF), run as their own project so that the two
// halves go side by side under `nx run-many -t test`; settings as tools/e2e's.
export default defineProject({
  root: e2e,
  resolve: { alias: aliases },
  test: {
    name: "e2e-2",
    include: SECOND_HALF.map((f) => `src/${f}`),
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    expect: { poll: { timeout: 10_000 } },
  },
});
