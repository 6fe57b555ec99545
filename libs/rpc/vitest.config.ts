import { projectConfig } from "../../vitest.shared.js";

// Isolated: a test here reads the process's memory, which another file's leftovers in a shared
// worker would move (ingest-core's collection test failed so once in a full run).
export default projectConfig("rpc", { isolate: true });
