export { freePort, waitFor } from "./ports.js";
export { tempDir } from "./temp.js";
export { startNatsServer, NATS_SERVER_BIN } from "./nats-server.js";
export type { NatsServer } from "./nats-server.js";
export { startNode } from "./processes.js";
export type { RunningProcess } from "./processes.js";
export { apiClient } from "./api.js";
export type { ApiClient, ApiResponse } from "./api.js";
export { buildApps, WORKSPACE_ROOT } from "./build.js";
