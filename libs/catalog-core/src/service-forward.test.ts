import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { CatalogService, ErrorDetailSchema, type Endpoint, type EventSchema } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";
import { PACED_SEND_DELAY_MS } from "./breaker.js";
import type { CatalogStore } from "./ports.js";

/*
 * Forwarding through the catalog service: the endpoint's forward settings and target secret,
 * relay captures, the outbox RPCs and the attempts, over the real embedded store, called with
 * a typed client on Connect's router transport as ingest, the gateway and replay call it.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const UNKNOWN_ID = "01890000-0000-7000-8000-000000000000";
const TARGET = "https://app.example.test/hooks";
const FORWARD_JSON = '{"url":"https://app.example.test/hooks","keepPath":true,"timeoutMs":10000,"maxAttempts":6}';

async function startCatalog(wrap: (store: CatalogStore, clock: { now: number }) => CatalogStore = (store) => store) {
  const dir = tempDir("whc-catalog-forward-");
  const opened = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await opened.close();
    dir.remove();
  });
  // The clock claims are made at: the service's, never the caller's.
  const clock = { now: 1_800_000_000_000 };
  const store = wrap(opened, clock);
  const transport = createRouterTransport((router) => router.service(CatalogService, createCatalogService(store, { now: () => clock.now })), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  return { catalog: createClient(CatalogService, transport), clock };
}

type Catalog = Client<typeof CatalogService>;

async function accountWithEndpoint(catalog: Catalog, extra: Partial<Omit<Endpoint, "$typeName">> = {}) {
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId, slug: `ep-${randomUUID().slice(0, 8)}`, displayName: "Orders", operatingMode: "relay", status: "active", provider: "generic", source: "api", forwardJson: FORWARD_JSON, ...extra },
  });
  return { accountId, endpoint: endpoint! };
}

function capture(endpoint: Endpoint, extra: MessageInitShape<typeof EventSchema> = {}) {
  return { accountId: endpoint.accountId, endpointId: endpoint.id, method: "POST", path: "/ci?x=1", responseCode: 202, ...extra };
}

const relay = (endpoint: Endpoint) => capture(endpoint, { forward: { target: TARGET }, forwardScheduled: true });

async function failure(call: Promise<unknown>) {
  const err = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => ConnectError.from(e),
  );
  const [detail] = err.findDetails(ErrorDetailSchema);
  return { code: Code[err.code], reason: detail?.reason, field: detail?.field, fieldReason: detail?.fieldReason };
}

const invalid = (field: string, fieldReason: string) => ({ code: "InvalidArgument", reason: "validation_failed", field, fieldReason });

function attempt(n: number, extra: Record<string, unknown> = {}) {
  return {
    n,
    trigger: n === 1 ? "initial" : "retry",
    atMs: 1_800_000_000_100n,
    url: `${TARGET}/ci?x=1`,
    durationMs: 41n,
    status: 500,
    headers: [
      { name: "Content-Type", value: "text/plain" },
      { name: "Set-Cookie", value: "a=1" },
      { name: "Set-Cookie", value: "b=2" },
    ],
    body: { ciphertext: new Uint8Array([0, 255, n]), wrappedKey: new Uint8Array([9]), keyId: "k2" },
    ...extra,
  };
}

describe("Endpoint forward settings", () => {
  it("keeps forward_json; the target secret shows as target_secret_set, its bytes only with include_sealed_secret", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog, { sealedTargetSecret: new Uint8Array([5, 5]) });
    expect(endpoint).toMatchObject({ forwardJson: FORWARD_JSON, targetSecretSet: true, sealedTargetSecret: new Uint8Array() });
    const { endpoint: sealed } = await catalog.getEndpoint({ endpointId: endpoint.id, includeSealedSecret: true });
    expect([...sealed!.sealedTargetSecret]).toEqual([5, 5]);

    const { endpoint: rotated } = await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { sealedTargetSecret: new Uint8Array([6]) } });
    expect(rotated).toMatchObject({ targetSecretSet: true, forwardJson: FORWARD_JSON });
    const { endpoint: cleared } = await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { clearTargetSecret: true } });
    expect(cleared).toMatchObject({ targetSecretSet: false, forwardJson: FORWARD_JSON });

    await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { sealedTargetSecret: new Uint8Array([7]) } });
    const { endpoint: removed } = await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { operatingMode: "capture", forwardJson: "" } });
    expect(removed).toMatchObject({ operatingMode: "capture", forwardJson: "", targetSecretSet: false });
    const { endpoint: none } = await catalog.getEndpoint({ endpointId: endpoint.id, includeSealedSecret: true });
    expect(none!.sealedTargetSecret.length).toBe(0);

    expect(
      await failure(catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { sealedTargetSecret: new Uint8Array() } })),
    ).toEqual(invalid("patch.sealed_target_secret", "length"));
  });
});

describe("the relay outbox over RPC", () => {
  it("appends a relay capture into the outbox; claims, retries and delivers it on the service's clock", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog);
    const { events } = await catalog.appendEvents({ events: [relay(endpoint), capture(endpoint)] });
    const [id, plainId] = [events[0]!.id, events[1]!.id];
    const receivedAt = events[0]!.receivedAtMs;
    // A capture appended with one target (the events field, or an ingest from before destinations)
    // goes to the endpoint's one destination, whose id is the endpoint's.
    const ref = { accountId, endpointId: endpoint.id, eventId: id, destinationId: endpoint.id };

    expect(await catalog.getOutboxStats({})).toMatchObject({ pending: 1n, oldestDueAtMs: receivedAt });
    const { deliveries } = await catalog.claimDeliveries({ owner: "replay-1", claimMs: 30_000n });
    // Not put back by a bulk redelivery job (no job, no attempt base: ADR 0089); no attempt held, no rate limit (ADR 0087).
    expect(deliveries.map((d) => ({ ...d }))).toEqual([{ $typeName: "webhookcapture.catalog.v1.DeliveryClaim", ...ref, attempt: 1, bulkJobId: "", attemptBase: 0, counted: 0, sendAfterMs: 0 }]);
    expect((await catalog.claimDeliveries({ owner: "replay-2", claimMs: 30_000n })).deliveries).toEqual([]);

    const retried = await catalog.recordForwardAttempt({ ...ref, attempt: attempt(1), state: "pending", nextAttemptAtMs: BigInt(clock.now + 10_000), claimOwner: "replay-1" });
    expect(retried.recorded).toBe(true);
    expect(retried.forward).toMatchObject({ state: "pending", target: TARGET, nextAttemptAtMs: BigInt(clock.now + 10_000) });
    // Nothing due: the answer says when the retry falls due, on the service's clock.
    expect(await catalog.claimDeliveries({ owner: "replay-2", claimMs: 30_000n })).toMatchObject({ deliveries: [], nextDueInMs: 10_000n });
    clock.now += 4_000;
    expect(await catalog.claimDeliveries({ owner: "replay-2", claimMs: 30_000n })).toMatchObject({ deliveries: [], nextDueInMs: 6_000n });
    clock.now += 6_000;
    const [second] = (await catalog.claimDeliveries({ owner: "replay-2", claimMs: 30_000n, limit: 1 })).deliveries;
    expect(second?.attempt).toBe(2);
    // Everything due is claimed: the next time one can be claimed is when this claim ends.
    expect((await catalog.claimDeliveries({ owner: "replay-2", claimMs: 30_000n })).nextDueInMs).toBe(30_000n);
    const done = await catalog.recordForwardAttempt({ ...ref, attempt: attempt(2, { status: 200 }), state: "delivered", claimOwner: "replay-2" });
    expect(done.forward).toMatchObject({ state: "delivered" });
    expect(done.forward!.nextAttemptAtMs).toBeUndefined();
    const empty = await catalog.getOutboxStats({});
    expect([empty.pending, empty.oldestDueAtMs]).toEqual([0n, undefined]);

    const { event } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: id });
    expect(event!.forward).toMatchObject({ state: "delivered", target: TARGET, attempts: [] });
    expect(event!.deliveries.map((d) => d.destinationId)).toEqual([endpoint.id]);
    expect(event!.deliveries[0]!.attempts.map((a) => [a.n, a.trigger, a.status, a.durationMs])).toEqual([
      [1, "initial", 500, 41n],
      [2, "retry", 200, 41n],
    ]);
    const [first] = event!.deliveries[0]!.attempts;
    expect(first!.headers.map((h) => [h.name, h.value])).toEqual([
      ["Content-Type", "text/plain"],
      ["Set-Cookie", "a=1"],
      ["Set-Cookie", "b=2"],
    ]);
    expect([...first!.body!.ciphertext]).toEqual([0, 255, 1]);
    expect(first!.body!.keyId).toBe("k2");
    expect((await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: plainId })).event!.forward).toBeUndefined();

    // Lists carry the state only; forward_state filters, "none" for events never forwarded.
    const listed = await catalog.listEvents({ accountId, endpointId: endpoint.id });
    expect(listed.events.map((e) => [e.id, e.forward?.state, e.forward?.target, e.forward?.attempts.length])).toEqual([
      [plainId, undefined, undefined, undefined],
      [id, "delivered", "", 0],
    ]);
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id, forwardState: "none" })).events.map((e) => e.id)).toEqual([plainId]);
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id, forwardState: "delivered" })).events.map((e) => e.id)).toEqual([id]);
    expect(await failure(catalog.listEvents({ accountId, endpointId: endpoint.id, forwardState: "sent" }))).toEqual(invalid("forward_state", "unknown"));
  });

  it("takes attempt numbers for direct attempts; an empty state records a direct attempt", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog);
    const { events } = await catalog.appendEvents({ events: [capture(endpoint, { forward: { target: TARGET } })] });
    const ref = { accountId, endpointId: endpoint.id, eventId: events[0]!.id, destinationId: endpoint.id };
    const { forward } = (await catalog.getEvent(ref)).event!;
    expect([forward?.state, forward?.target, forward?.nextAttemptAtMs]).toEqual(["pending", TARGET, undefined]);
    expect(await catalog.getOutboxStats({})).toMatchObject({ pending: 0n });

    // A proxy's capture comes with its attempt 1 begun (ADR 0098): the proxy records it without a begin.
    const failed = await catalog.recordForwardAttempt({ ...ref, attempt: attempt(1, { trigger: "initial", status: 0, error: "timeout", body: undefined }) });
    expect(failed.forward).toMatchObject({ state: "failed" });
    expect(failed.forward!.attempts[0]).toMatchObject({ status: 0, error: "timeout", requestSha256: "", message: "" });
    expect(failed.forward!.attempts[0]!.body).toBeUndefined();
    expect((await catalog.beginForwardAttempt({ ...ref, target: TARGET })).attempt).toBe(2);
    expect((await catalog.beginForwardAttempt({ ...ref, target: TARGET })).attempt).toBe(3);
    const delivered = await catalog.recordForwardAttempt({ ...ref, attempt: attempt(3, { trigger: "manual", status: 204 }) });
    expect(delivered.forward).toMatchObject({ state: "delivered" });
  });

  it("is not_found (begin) or not recorded (record) for unknown events, and refuses bad requests", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog);
    const ref = { accountId, endpointId: endpoint.id, eventId: UNKNOWN_ID, destinationId: endpoint.id };
    expect(await failure(catalog.beginForwardAttempt({ ...ref, target: TARGET }))).toMatchObject({ code: "NotFound", reason: "not_found" });
    const unrecorded = await catalog.recordForwardAttempt({ ...ref, attempt: attempt(1) });
    expect([unrecorded.recorded, unrecorded.forward]).toEqual([false, undefined]);

    expect(await failure(catalog.claimDeliveries({ claimMs: 1000n }))).toEqual(invalid("owner", "required"));
    expect(await failure(catalog.claimDeliveries({ owner: "w", limit: 501, claimMs: 1000n }))).toEqual(invalid("limit", "range"));
    expect(await failure(catalog.claimDeliveries({ owner: "w", limit: -1, claimMs: 1000n }))).toEqual(invalid("limit", "range"));
    expect(await failure(catalog.claimDeliveries({ owner: "w" }))).toEqual(invalid("claim_ms", "range"));
    expect(await failure(catalog.beginForwardAttempt({ ...ref, target: "" }))).toEqual(invalid("target", "required"));
    expect(await failure(catalog.beginForwardAttempt({ ...ref, eventId: "nope", target: TARGET }))).toEqual(invalid("event_id", "format"));
    expect(await failure(catalog.beginForwardAttempt({ ...ref, accountId: "", target: TARGET }))).toEqual(invalid("account_id", "required"));
    expect(await failure(catalog.beginForwardAttempt({ ...ref, destinationId: "", target: TARGET }))).toEqual(invalid("destination_id", "format"));
    expect(await failure(catalog.recordForwardAttempt({ ...ref, destinationId: "d", attempt: attempt(1) }))).toEqual(invalid("destination_id", "format"));
    expect(await failure(catalog.listEvents({ accountId, endpointId: endpoint.id, destinationId: "d" }))).toEqual(invalid("destination_id", "format"));

    const record = (extra: Record<string, unknown>) => catalog.recordForwardAttempt({ ...ref, attempt: attempt(1), ...extra });
    expect(await failure(record({ attempt: undefined }))).toEqual(invalid("attempt", "required"));
    expect(await failure(record({ attempt: attempt(0) }))).toEqual(invalid("attempt.n", "range"));
    expect(await failure(record({ attempt: attempt(1, { trigger: "later" }) }))).toEqual(invalid("attempt.trigger", "unknown"));
    expect(await failure(record({ attempt: attempt(1, { url: "" }) }))).toEqual(invalid("attempt.url", "required"));
    expect(await failure(record({ attempt: attempt(1, { status: 1000 }) }))).toEqual(invalid("attempt.status", "range"));
    expect(await failure(record({ attempt: attempt(1, { body: { ciphertext: new Uint8Array([1]) } }) }))).toEqual(invalid("attempt.body.key_id", "required"));
    expect(await failure(record({ state: "sent", claimOwner: "w" }))).toEqual(invalid("state", "unknown"));
    expect(await failure(record({ state: "delivered" }))).toEqual(invalid("claim_owner", "required"));
    expect(await failure(record({ state: "pending", claimOwner: "w" }))).toEqual(invalid("next_attempt_at_ms", "required"));
    expect(await failure(record({ attempt: attempt(1, { requestSha256: "XYZ" }) }))).toEqual(invalid("attempt.request_sha256", "format"));

    expect(await failure(catalog.appendEvents({ events: [capture(endpoint, { forwardScheduled: true })] }))).toEqual(invalid("forward", "required"));
    expect(await failure(catalog.appendEvents({ events: [capture(endpoint, { forward: { target: "" } })] }))).toEqual(invalid("forward.target", "required"));
  });

  it("fans a capture out to the destinations it matched: one delivery each, claimed and recorded each on its own (design §17)", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog);
    const [a, b] = ["0190a000-0000-7000-8000-00000000000a", "0190a000-0000-7000-8000-00000000000b"];
    const captured = {
      accountId,
      endpointId: endpoint.id,
      method: "POST",
      responseCode: 202,
      forwardScheduled: true,
      deliveries: [
        { destinationId: a, target: `${TARGET}/a` },
        { destinationId: b, target: `${TARGET}/b` },
      ],
    };
    const { events } = await catalog.appendEvents({ captures: [captured, { ...captured, deliveries: [] , forwardScheduled: false }] });
    const [id, unmatched] = [events[0]!.id, events[1]!.id];
    expect(await catalog.getOutboxStats({})).toMatchObject({ pending: 2n });
    const { deliveries } = await catalog.claimDeliveries({ owner: "w", claimMs: 30_000n });
    expect(deliveries.map((d) => [d.eventId, d.destinationId, d.attempt]).sort()).toEqual([
      [id, a, 1],
      [id, b, 1],
    ]);
    const toA = await catalog.recordForwardAttempt({ accountId, endpointId: endpoint.id, eventId: id, destinationId: a, attempt: attempt(1, { status: 200 }), state: "delivered", claimOwner: "w" });
    expect([toA.forward?.destinationId, toA.forward?.state, toA.forwardState]).toEqual([a, "delivered", "pending"]);
    const toB = await catalog.recordForwardAttempt({ accountId, endpointId: endpoint.id, eventId: id, destinationId: b, attempt: attempt(1, { status: 410 }), state: "failed", claimOwner: "w" });
    expect([toB.forward?.state, toB.forwardState]).toEqual(["failed", "failed"]);
    const { event } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: id });
    expect(event!.forward?.state).toBe("failed");
    expect(event!.deliveries.map((d) => [d.destinationId, d.state, d.target, d.attempts.length])).toEqual([
      [a, "delivered", `${TARGET}/a`, 1],
      [b, "failed", `${TARGET}/b`, 1],
    ]);
    // Matched by no destination: never forwarded.
    expect((await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: unmatched })).event!.deliveries).toEqual([]);
    const list = async (q: { destinationId?: string; forwardState?: string }) => (await catalog.listEvents({ accountId, endpointId: endpoint.id, ...q })).events.map((e) => e.id);
    expect(await list({ destinationId: b })).toEqual([id]);
    expect(await list({ forwardState: "none" })).toEqual([unmatched]);
    expect(await list({ forwardState: "failed", destinationId: a })).toEqual([id]);
  });

  it("anchors a rate-limited delivery's send on its turn: a claim whose commit took 100 ms tells the worker to send 100 ms sooner (ADR 0087)", async () => {
    // The store's claim takes 100 ms of the service's clock (a commit's fsync under load).
    const { catalog } = await startCatalog((store, clock) =>
      new Proxy(store, {
        get(target, key, receiver) {
          if (key !== "claimDeliveries") return Reflect.get(target, key, receiver);
          return async (...args: Parameters<CatalogStore["claimDeliveries"]>) => {
            const claimed = await target.claimDeliveries(...args);
            clock.now += 100;
            return claimed;
          };
        },
      }),
    );
    const destinationId = "0190a000-0000-7000-8000-00000000000c";
    const destination = { id: destinationId, name: "paced", url: TARGET, keepPath: false, timeoutMs: 1000, maxAttempts: 6, targetSecretSet: false, rateLimit: { perSecond: 5 } };
    const { accountId, endpoint } = await accountWithEndpoint(catalog, { operatingMode: "relay", forwardJson: JSON.stringify([destination]) });
    await catalog.appendEvents({
      captures: [{ accountId, endpointId: endpoint.id, method: "POST", responseCode: 200, forwardScheduled: true, deliveries: [{ destinationId, target: TARGET }] }],
    });
    const { deliveries } = await catalog.claimDeliveries({ owner: "w", claimMs: 30_000n });
    expect(deliveries.map((d) => d.sendAfterMs)).toEqual([PACED_SEND_DELAY_MS - 100]);
  });
});
