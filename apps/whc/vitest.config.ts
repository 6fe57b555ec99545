import { projectConfig } from "../../vitest.shared.js";

// Each test runs the CLI as processes against a real server: 10-20 s on a quiet machine, up to
// 30 s when CI runs three projects at once (the dedupe test runs whc 15 times), and twice that
// on a slow hour of a shared machine, where one CI run failed this project. One limit for every
// test, none set lower in a file; the hooks build the apps and start the server, as slow.
export default projectConfig("whc", { testTimeout: 180_000, hookTimeout: 120_000 });
