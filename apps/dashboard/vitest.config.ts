import { projectConfig } from "../../vitest.shared.js";

// A page under a loaded CI machine can take seconds to show what a poll waits for: vitest's
// default of 1 s made tests flaky, never faster.
export default projectConfig("dashboard", { testTimeout: 60_000, hookTimeout: 90_000, expect: { poll: { timeout: 10_000 } } });
