import { configDefaults } from "vitest/config";
import { projectConfig } from "../../vitest.shared.js";
import { SECOND_HALF } from "./second-half.js";

// Real processes start here: one file at a time keeps two cores from being oversubscribed. A
// poll waits up to 10 s (vitest's default is 1 s): a loaded CI machine is slow, not wrong. The
// files of SECOND_HALF are the project e2e-2's (tools/e2e-2), run beside these.
export default projectConfig("e2e", {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  fileParallelism: false,
  // Each file starts its own processes and keeps them in module variables: isolated, as e2e-2's.
  isolate: true,
  expect: { poll: { timeout: 10_000 } },
  exclude: [...configDefaults.exclude, ...SECOND_HALF.map((f) => `src/${f}`)],
});
