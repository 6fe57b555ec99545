export { createReplayService } from "./service.js";
export type { ReplayServiceDeps, ReplayServiceOptions } from "./service.js";
export { secondsToUtcMidnight, utcDay } from "./allowance.js";
export { createForwarder } from "./forwarder.js";
export type { Forwarder, ForwarderOptions } from "./forwarder.js";
export type { ForwardDeps, ForwardOptions } from "./forward-attempt.js";
export { createForwardMetrics } from "./forward-metrics.js";
export type { ForwardMetrics, OutboxFigures } from "./forward-metrics.js";
