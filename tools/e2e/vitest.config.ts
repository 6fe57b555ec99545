import { projectConfig } from "../../vitest.shared.js";

// Real processes start here: one file at a time keeps two cores from being oversubscribed. A
// poll waits up to 10 s (vitest's default is 1 s): a loaded CI machine is slow, not wrong.
export default projectConfig("e2e", { testTimeout: 60_000, hookTimeout: 60_000, fileParallelism: false, expect: { poll: { timeout: 10_000 } } });
