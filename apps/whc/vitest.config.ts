import { projectConfig } from "../../vitest.shared.js";

// Each test runs the CLI as processes against a real server: 10-20 s on a quiet machine, and past
// the default 20 s when CI runs three projects at once (a timed-out test also left its environment
// changes to the next one).
export default projectConfig("whc", { testTimeout: 60_000 });
