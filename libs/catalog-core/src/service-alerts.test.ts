import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { CatalogService, ErrorDetailSchema } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";

/*
 * Alerts through the catalog service (design §18; ADR 0085): channels checked and audited, and
 * the occurrences the catalog raises itself (signature.failed after an append, delivery.failed
 * and delivery.exhausted from the outbox's verdicts and a proxy's attempt, listener.stalled),
 * seen by claiming the alert outbox.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T0 = 1_800_000_000_000;
const SECRET = new Uint8Array([5, 5, 5]);
const KEY_ID = "01a20000-0000-7000-8000-0000000000c1";

async function startCatalog() {
  const dir = tempDir("whc-catalog-alerts-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await store.close();
    dir.remove();
  });
  const clock = { now: T0 };
  const service = createCatalogService(store, {
    now: () => clock.now,
    listeners: { ttlMs: 30_000, stallMs: 120_000, perEndpoint: 5 },
    alerts: { coalesceMs: 600_000, perAccount: 3 },
  });
  const transport = createRouterTransport((router) => router.service(CatalogService, service), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  return { catalog: createClient(CatalogService, transport), clock };
}

type Catalog = Client<typeof CatalogService>;

async function account(catalog: Catalog, operatingMode = "capture") {
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const slug = `ep-${randomUUID().slice(0, 8)}`;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId, slug, displayName: "Watched", operatingMode, status: "active", provider: "generic", source: "api", forwardJson: '{"url":"https://app.example.test/"}' },
  });
  return { accountId, endpointId: endpoint!.id, slug };
}

async function channel(catalog: Catalog, accountId: string, events: string[], extra: { endpointIds?: string[]; name?: string } = {}) {
  const { channel } = await catalog.createAlertChannel({
    accountId,
    name: extra.name ?? `ops-${randomUUID().slice(0, 6)}`,
    type: "webhook",
    url: "https://alerts.example.test/hook?token=t0ps3cret",
    events,
    endpointIds: extra.endpointIds ?? [],
    sealedSecret: SECRET,
    audit: { keyId: KEY_ID, keyPrefix: "whc_k", remoteIp: "203.0.113.9", requestId: "r1" },
  });
  return channel!;
}

async function claimed(catalog: Catalog) {
  const { alerts } = await catalog.claimAlerts({ owner: "w", limit: 50, claimMs: 1000n });
  return alerts.map((c) => ({ type: c.alert!.type, count: c.alert!.count, endpointSlug: c.alert!.endpointSlug, data: JSON.parse(c.alert!.dataJson) as Record<string, unknown>, channel: c.channel!.id }));
}

async function failure(call: Promise<unknown>) {
  const err = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => ConnectError.from(e),
  );
  const detail = err.findDetails(ErrorDetailSchema)[0];
  return { code: err.code, reason: detail?.reason, field: detail?.field, fieldReason: detail?.fieldReason };
}

describe("alert channels through the catalog service", () => {
  it("creates a checked channel, lists it without its secret, audits create and delete with the URL's origin only", async () => {
    const { catalog } = await startCatalog();
    const { accountId } = await account(catalog);
    const created = await channel(catalog, accountId, ["signature.failed"], { name: "ops" });
    expect(created).toMatchObject({ name: "ops", type: "webhook", secretSet: true, events: ["signature.failed"] });
    expect(created.sealedSecret).toHaveLength(0);
    const { channels } = await catalog.listAlertChannels({ accountId });
    expect(channels.map((c) => [c.id, c.secretSet, c.sealedSecret.length])).toEqual([[created.id, true, 0]]);

    const base = { accountId, name: "x", type: "webhook", url: "https://a.example.test/", events: ["test"], endpointIds: [], sealedSecret: SECRET };
    expect(await failure(catalog.createAlertChannel({ ...base, type: "email" }))).toMatchObject({ code: Code.InvalidArgument, field: "type", fieldReason: "unknown" });
    expect(await failure(catalog.createAlertChannel({ ...base, url: "ftp://a.example.test/" }))).toMatchObject({ field: "url", fieldReason: "format" });
    expect(await failure(catalog.createAlertChannel({ ...base, events: ["delivery.lost"] }))).toMatchObject({ field: "events.0", fieldReason: "unknown" });
    expect(await failure(catalog.createAlertChannel({ ...base, sealedSecret: new Uint8Array() }))).toMatchObject({ field: "sealed_secret", fieldReason: "required" });
    expect(await failure(catalog.createAlertChannel({ ...base, type: "slack" }))).toMatchObject({ field: "sealed_secret", fieldReason: "unknown" });
    expect(await failure(catalog.createAlertChannel({ ...base, name: "ops" }))).toMatchObject({ reason: "conflict", field: "name" });

    await catalog.deleteAlertChannel({ accountId, channelId: created.id, audit: { keyId: KEY_ID, keyPrefix: "whc_k", remoteIp: "203.0.113.9", requestId: "r2" } });
    expect(await failure(catalog.deleteAlertChannel({ accountId, channelId: created.id }))).toMatchObject({ code: Code.NotFound });
    const { entries } = await catalog.listAudit({ accountId });
    expect(entries.map((e) => [e.action, JSON.parse(e.detailsJson)])).toEqual([
      ["alert_channel.deleted", { id: created.id }],
      ["alert_channel.created", { id: created.id, name: "ops", type: "webhook", origin: "https://alerts.example.test", events: ["signature.failed"], endpointIds: [] }],
    ]);
    expect(entries.map((e) => e.detailsJson).join()).not.toContain("t0ps3cret");
  });

  it("refuses a channel past the account's limit with quota_exceeded", async () => {
    const { catalog } = await startCatalog();
    const { accountId } = await account(catalog);
    for (let i = 0; i < 3; i += 1) await channel(catalog, accountId, ["test"]);
    expect(await failure(channel(catalog, accountId, ["test"]))).toMatchObject({ code: Code.ResourceExhausted, reason: "quota_exceeded" });
  });
});

describe("alerts the catalog raises itself", () => {
  it("signature.failed once a capture whose signature failed is stored, coalesced with its repeats; none for other captures", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId, slug } = await account(catalog);
    const watching = await channel(catalog, accountId, ["signature.failed"]);
    const failed = { accountId, endpointId, method: "POST", responseCode: 200, provider: "stripe", verification: "failed", verificationFailureReason: "signature_mismatch" };
    await catalog.appendEvents({ events: [{ ...failed, verification: "verified", verificationFailureReason: "" }, { ...failed, verification: "unverified", verificationFailureReason: "" }] });
    expect(await claimed(catalog)).toEqual([]);

    const { events } = await catalog.appendEvents({ events: [failed, failed] });
    clock.now += 1;
    expect(await claimed(catalog)).toEqual([
      { type: "signature.failed", count: 2, endpointSlug: slug, channel: watching.id, data: { eventId: events[1]!.id, provider: "stripe", reason: "signature_mismatch", eventType: "" } },
    ]);
  });

  it("delivery.exhausted and delivery.failed when the outbox worker's verdict applies, and delivery.failed for a proxy's failed attempt; nothing for a retry or a manual redelivery", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId } = await account(catalog, "relay");
    const c = await channel(catalog, accountId, ["delivery.exhausted", "delivery.failed"], { endpointIds: [endpointId] });
    const attempt = (n: number, trigger: string, status: number) => ({ n, trigger, atMs: BigInt(clock.now), url: "https://app.example.test/", durationMs: 3n, status, headers: [], bodyTruncated: false, error: "" });
    const relayed = async (scheduled = true) => {
      const forward = { state: "pending", target: "https://app.example.test/", attempts: [] };
      const { events } = await catalog.appendEvents({ events: [{ accountId, endpointId, method: "POST", responseCode: 200, forward, forwardScheduled: scheduled }] });
      // A forward of part two: one delivery whose destination id is the endpoint's (legacyDestinationId).
      return { accountId, endpointId, eventId: events[0]!.id, destinationId: endpointId };
    };
    const ref = await relayed();
    const claimOne = async () => (await catalog.claimDeliveries({ owner: "fw", limit: 10, claimMs: 60_000n })).deliveries[0]!;

    let d = await claimOne();
    await catalog.recordForwardAttempt({ ...ref, attempt: attempt(d.attempt, "initial", 503), state: "pending", nextAttemptAtMs: BigInt(clock.now), claimOwner: "fw" });
    expect(await claimed(catalog)).toEqual([]);
    d = await claimOne();
    await catalog.recordForwardAttempt({ ...ref, attempt: attempt(d.attempt, "retry", 503), state: "exhausted", claimOwner: "fw" });
    const exhausted = await claimed(catalog);
    expect(exhausted).toMatchObject([{ type: "delivery.exhausted", count: 1, channel: c.id, data: { eventId: ref.eventId, attempts: 2, status: 503, error: null } }]);

    const other = await relayed();
    d = await claimOne();
    await catalog.recordForwardAttempt({ ...other, attempt: attempt(d.attempt, "initial", 410), state: "failed", claimOwner: "fw" });
    // A manual redelivery that fails is answered to the one who asked: no alert.
    const manual = await catalog.beginForwardAttempt({ ...ref, target: "https://app.example.test/" });
    await catalog.recordForwardAttempt({ ...ref, attempt: attempt(manual.attempt, "manual", 500) });
    // A proxy's one attempt that fails is an alert (nobody but the sender saw it).
    const proxied = await relayed(false);
    const begun = await catalog.beginForwardAttempt({ ...proxied, target: "https://app.example.test/" });
    await catalog.recordForwardAttempt({ ...proxied, attempt: attempt(begun.attempt, "initial", 502) });
    // Both failures of the endpoint are one alert (the first was not tried yet), the manual one not counted.
    expect((await claimed(catalog)).map((a) => [a.type, a.count, a.data.eventId])).toEqual([["delivery.failed", 2, proxied.eventId]]);
  });

  it("destination.opened when a record opens a destination's breaker, destination.closed when one closes it; once each (design §18)", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId, slug } = await account(catalog, "relay");
    // Appended as part two's captures are: their one delivery goes to the destination under the endpoint's own id.
    const destinationId = endpointId;
    await catalog.updateEndpoint({
      accountId,
      endpointId,
      patch: { forwardJson: JSON.stringify([{ id: destinationId, name: "billing", url: "https://app.example.test/", breaker: { failures: 2, probeAfterMs: 5000 } }]) },
    });
    const c = await channel(catalog, accountId, ["destination.opened", "destination.closed"]);
    const attempt = (n: number, status: number) => ({ n, trigger: n === 1 ? "initial" : "retry", atMs: BigInt(clock.now), url: "https://app.example.test/", durationMs: 3n, status, headers: [], bodyTruncated: false, error: "" });
    const forward = { state: "pending", target: "https://app.example.test/", attempts: [] };
    await catalog.appendEvents({ events: [0, 1, 2].map(() => ({ accountId, endpointId, method: "POST", responseCode: 200, forward, forwardScheduled: true })) });
    const claims = (await catalog.claimDeliveries({ owner: "fw", limit: 2, claimMs: 60_000n })).deliveries;
    expect(claims).toHaveLength(2);
    const refOf = (d: { accountId: string; endpointId: string; eventId: string; destinationId: string }) => ({ accountId: d.accountId, endpointId: d.endpointId, eventId: d.eventId, destinationId: d.destinationId });
    for (const d of claims) await catalog.recordForwardAttempt({ ...refOf(d), attempt: attempt(d.attempt, 503), state: "pending", nextAttemptAtMs: BigInt(clock.now + 1000), claimOwner: "fw" });
    const opened = await claimed(catalog);
    expect(opened).toMatchObject([
      { type: "destination.opened", count: 1, endpointSlug: slug, channel: c.id, data: { destinationId, name: "billing", state: "open", consecutiveFailures: 2, held: 3 } },
    ]);
    const { endpoint } = await catalog.getEndpoint({ accountId, endpointId, includeBreakers: true });
    expect(endpoint!.breakers).toMatchObject([{ destinationId, state: "open", consecutiveFailures: 2, held: 3n, nextProbeAtMs: BigInt(T0 + 5000) }]);

    clock.now = T0 + 5000;
    const [probe] = (await catalog.claimDeliveries({ owner: "fw", limit: 10, claimMs: 60_000n })).deliveries;
    await catalog.recordForwardAttempt({ ...refOf(probe!), attempt: attempt(probe!.attempt, 200), state: "delivered", claimOwner: "fw" });
    // The opening's alert again (its claim lapsed, never recorded), and one closing.
    const after = await claimed(catalog);
    expect(after.map((a) => a.type).sort()).toEqual(["destination.closed", "destination.opened"]);
    // Its held deliveries drain one at a time: one let go, one still held.
    expect(after.find((a) => a.type === "destination.closed")).toMatchObject({ data: { destinationId, state: "closed", consecutiveFailures: 0, held: 1 } });
    // Still draining: shown to the metrics as closed with its held delivery, until none is left.
    expect((await catalog.getOutboxStats({})).breakers).toMatchObject([{ destinationId, state: "closed", held: 1n }]);
  });

  it("listener.stalled once, when a heartbeat turns a listener stalled", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId } = await account(catalog);
    await channel(catalog, accountId, ["listener.stalled"]);
    const { events } = await catalog.appendEvents({ events: [{ accountId, endpointId, method: "POST", responseCode: 200 }, { accountId, endpointId, method: "POST", responseCode: 200 }] });
    const listenerId = randomUUID();
    const beat = () =>
      catalog.putListener({ accountId, listener: { id: listenerId, endpointId, host: "laptop", startedAtMs: BigInt(T0), cursorAtMs: events[0]!.receivedAtMs - 60_000n, cursorId: "00000000-0000-7000-8000-000000000000" } });
    // Heartbeats every 20 s (within the 30 s lifetime), the lag never falling: stalled at 120 s, told once.
    for (const step of [0, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000]) {
      clock.now += step;
      await beat();
    }
    const alerts = await claimed(catalog);
    expect(alerts).toMatchObject([{ type: "listener.stalled", count: 1, data: { listenerId, host: "laptop", lagEvents: 2 } }]);
  });
});
