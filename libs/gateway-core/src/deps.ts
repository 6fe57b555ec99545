import type { Client } from "@connectrpc/connect";
import type { CatalogService, CryptoService, Health, ReplayService } from "@whc/contracts";
import type { BlindIndexer, EnvelopeOpener } from "@whc/sealing";
import type { CaptureBus } from "@whc/ports";
import type { Logger } from "@whc/logging";
import type { ReadinessJson } from "@whc/api-model";
import type { createGatewayMetrics } from "./middleware/metrics.js";

export interface GatewayDeps {
  catalog: Client<typeof CatalogService>;
  crypto: Client<typeof CryptoService>;
  replay: Client<typeof ReplayService>;
  health: { catalog: Client<typeof Health>; crypto: Client<typeof Health>; replay: Client<typeof Health> };
  /** GET /readyz: every dependency of this process, by name (catalog, crypto, replay, nats). */
  readiness: { check(): Promise<ReadinessJson> };
  opener: EnvelopeOpener;
  blindIndex: () => Promise<BlindIndexer>;
  bus: CaptureBus;
  logger: Logger;
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

export interface GatewayOptions {
  ingestPublicUrl: string;
  replayDailyLimit: number;
  /** Re-query interval of `wait` when the bus is down (and the safety net when it is up). */
  waitPollMs: number;
  /** Aborted at shutdown: held long polls answer at once so the drain is quick. */
  shutdownSignal?: AbortSignal;
  /** The built dashboard (index.html and assets/), served at `/` without credentials. */
  dashboardDir?: string;
  /**
   * Where the request series go (createGatewayMetrics); the process serves them on its
   * metrics port, never on the gateway's own (docs/operations.md, "Security model").
   */
  metrics?: GatewayMetrics;
}
