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
  /**
   * Where this gateway reaches ingest itself to deliver triggered samples (ADR 0055): the
   * all-in-one process's own listener, or WHC_INGEST_INTERNAL_URL; ingestPublicUrl when absent.
   */
  ingestUrl?: string;
  /** How long a trigger waits for ingest's answer; 35 s by default (a configured answer may wait 30 s). */
  triggerTimeoutMs?: number;
  replayDailyLimit: number;
  /** Re-query interval of `wait` when the bus is down (and the safety net when it is up). */
  waitPollMs: number;
  /**
   * Per API key, counted in this process (ADR 0035): requests per second (WHC_QUOTA_API_RPS,
   * bursts of twice as many) and `wait` long polls held at once (WHC_QUOTA_WAITS_PER_KEY).
   */
  quotas: { apiRps: number; waitsPerKey: number; /** The rate's clock (tests stop it); default Date.now. */ now?: () => number };
  /**
   * A bulk export's connection that takes and brings nothing for this long is closed
   * (WHC_EXPORT_IDLE_S; 120 s by default): a reader that stopped reading holds nothing for ever.
   */
  exportIdleMs?: number;
  /**
   * Proxies (WHC_TRUSTED_PROXIES) whose X-Forwarded-For names the caller recorded in audit
   * entries; none by default: the socket peer is recorded.
   */
  trustedProxies?: ReadonlySet<string>;
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
