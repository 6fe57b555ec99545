import { projectConfig } from "../../vitest.shared.js";

export default projectConfig("dashboard", { testTimeout: 60_000, hookTimeout: 90_000 });
