import { projectConfig } from "../../vitest.shared.js";

// Real processes start here: one file at a time keeps two cores from being oversubscribed.
export default projectConfig("e2e", { testTimeout: 60_000, hookTimeout: 60_000, fileParallelism: false });
