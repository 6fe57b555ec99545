import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { CatalogService, ErrorDetailSchema } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";

/*
 * Bulk redelivery's RPCs (ADR 0089) over the real embedded store: what each checks of its
 * request before the store sees it, the limits the catalog is configured with, and the lease
 * and page calls as the replay runner makes them, on the service's clock.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const DESTINATION = "01890000-0000-7000-8000-0000000000d1";
const KEY_ID = "01890000-0000-7000-8000-0000000000c1";
const audit = { keyId: KEY_ID, keyPrefix: "whc_t", remoteIp: "127.0.0.1", requestId: "r1", detailsJson: '{"filter":{}}', action: "" };

async function startCatalog(options: Parameters<typeof createCatalogService>[1] = {}) {
  const dir = tempDir("whc-catalog-redelivery-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await store.close();
    dir.remove();
  });
  const clock = { now: 1_800_000_000_000 };
  const transport = createRouterTransport((router) => router.service(CatalogService, createCatalogService(store, { now: () => clock.now, ...options })), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  const catalog = createClient(CatalogService, transport);
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: {
      accountId,
      slug: `ep-${randomUUID().slice(0, 8)}`,
      displayName: "Orders",
      operatingMode: "relay",
      status: "active",
      provider: "generic",
      source: "api",
      forwardJson: JSON.stringify([{ id: DESTINATION, name: "app", url: "https://app.example.test/" }]),
    },
  });
  return { catalog, clock, accountId, endpointId: endpoint!.id };
}

/** The reason and field a refusal carries over Connect. */
async function refusal(call: Promise<unknown>): Promise<{ reason: string; field: string; quota?: string }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const connect = err as ConnectError;
  const [detail] = connect.findDetails(ErrorDetailSchema);
  const quota = connect.metadata.get("whc-meta-quota") ?? undefined;
  return { reason: detail?.reason ?? "", field: detail?.field ?? "", ...(quota ? { quota } : {}) };
}

describe("bulk redelivery's RPCs", () => {
  it("check the filter as the event list does, and the ids, leases and page sizes", async () => {
    const { catalog, accountId, endpointId } = await startCatalog();
    expect(await refusal(catalog.countRedeliveries({ accountId, endpointId, filter: { forwardState: "lost" } }))).toEqual({ reason: "validation_failed", field: "filter.forward_state" });
    expect(await refusal(catalog.countRedeliveries({ accountId, endpointId, filter: { destinationId: "nope" } }))).toEqual({ reason: "validation_failed", field: "filter.destination_id" });
    expect(await refusal(catalog.countRedeliveries({ accountId, endpointId: "nope" }))).toEqual({ reason: "validation_failed", field: "endpoint_id" });
    expect(await refusal(catalog.createRedeliveryJob({ accountId, endpointId }))).toEqual({ reason: "validation_failed", field: "audit" });
    expect(await refusal(catalog.getRedeliveryJob({ accountId, endpointId, jobId: "nope" }))).toEqual({ reason: "validation_failed", field: "job_id" });
    expect(await refusal(catalog.claimRedeliveryJob({ owner: "", leaseMs: 1000n }))).toEqual({ reason: "validation_failed", field: "owner" });
    expect(await refusal(catalog.claimRedeliveryJob({ owner: "r", leaseMs: 0n }))).toEqual({ reason: "validation_failed", field: "lease_ms" });
    const job = (await catalog.createRedeliveryJob({ accountId, endpointId, audit })).job!;
    expect(await refusal(catalog.runRedeliveryPage({ jobId: job.id, owner: "r", limit: 1001, leaseMs: 1000n }))).toEqual({ reason: "validation_failed", field: "limit" });
    expect(await refusal(catalog.releaseRedeliveryJob({ jobId: job.id, owner: "r", afterMs: -1n }))).toEqual({ reason: "validation_failed", field: "after_ms" });
  });

  it("starts a job for the audit's key, refuses past the configured limits, and leases it on the service's clock", async () => {
    const { catalog, clock, accountId, endpointId } = await startCatalog({ redeliveries: { runningPerAccount: 1 } });
    const { job } = await catalog.createRedeliveryJob({ accountId, endpointId, audit, filter: { eventType: "invoice.paid", destinationId: DESTINATION.toUpperCase() } });
    expect(job).toMatchObject({ state: "done", total: 0n, createdByKeyId: KEY_ID, createdByKeyPrefix: "whc_t", createdAtMs: BigInt(clock.now), filter: { eventType: "invoice.paid", destinationId: DESTINATION } });
    const { entries } = await catalog.listAudit({ accountId, limit: 10 });
    expect(entries.map((e) => [e.action, JSON.parse(e.detailsJson)])).toEqual([["redelivery.started", { filter: {}, jobId: job!.id, total: 0 }]]);
    // A job with something to do is running, and the account's one running job.
    // An event redelivered by hand to the destination: its delivery is created delivered.
    await catalog.appendEvents({ events: [{ accountId, endpointId, method: "POST", path: "", responseCode: 200 }] });
    const [event] = (await catalog.listEvents({ accountId, endpointId, limit: 1 })).events;
    const forwarded = await catalog.recordForwardAttempt({
      accountId,
      endpointId,
      eventId: event!.id,
      destinationId: DESTINATION,
      attempt: { n: 1, trigger: "manual", atMs: BigInt(clock.now), url: "https://app.example.test/", durationMs: 1n, status: 200, headers: [], bodyTruncated: false, error: "", requestSha256: "", message: "" },
    });
    expect(forwarded.forward?.state).toBe("delivered");
    const running = (await catalog.createRedeliveryJob({ accountId, endpointId, audit })).job!;
    expect([running.state, running.total]).toEqual(["running", 1n]);
    expect(await refusal(catalog.createRedeliveryJob({ accountId, endpointId, audit }))).toEqual({ reason: "quota_exceeded", field: "", quota: "redelivery_jobs" });
    // The lease runs on the service's clock.
    expect((await catalog.claimRedeliveryJob({ owner: "r1", leaseMs: 5000n })).job?.id).toBe(running.id);
    clock.now += 4999;
    expect((await catalog.claimRedeliveryJob({ owner: "r2", leaseMs: 5000n })).job).toBeUndefined();
    clock.now += 1;
    expect((await catalog.claimRedeliveryJob({ owner: "r2", leaseMs: 5000n })).job?.id).toBe(running.id);
    const paged = (await catalog.runRedeliveryPage({ jobId: running.id, owner: "r2", limit: 10, leaseMs: 5000n })).job!;
    expect([paged.queued, paged.walked, paged.state]).toEqual([1n, true, "running"]);
    expect((await catalog.runRedeliveryPage({ jobId: running.id, owner: "r1", limit: 10, leaseMs: 5000n })).job).toBeUndefined();
    const [claim] = (await catalog.claimDeliveries({ owner: "w", claimMs: 1000n })).deliveries;
    expect([claim!.bulkJobId, claim!.attemptBase, claim!.attempt]).toEqual([running.id, 1, 2]);
  });
});
