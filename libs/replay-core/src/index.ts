export { createReplayService } from "./service.js";
export type { ReplayServiceDeps, ReplayServiceOptions } from "./service.js";
export { secondsToUtcMidnight, utcDay } from "./allowance.js";
