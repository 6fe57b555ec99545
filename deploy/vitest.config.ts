import { projectConfig } from "../vitest.shared.js";

// Renders the Kubernetes manifests with kubectl and starts the all-in-one process once.
export default projectConfig("deploy", { testTimeout: 60_000, hookTimeout: 60_000 });
