import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { MAX_DESTINATIONS, MAX_TRANSFORM_BYTES, type ApiClient, type ApiError, type DestinationInput } from "@whc/api-model";
import { REFUSED_FILTERS } from "@whc/routing/testing";
import { createOpenApiValidator } from "@whc/testing";
import { refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/*
 * Routing's /v1 surface (design §17): an endpoint's destinations on create and PATCH (ids,
 * names, secrets, filters, the `forward` shorthand, proxy's one destination), what each refusal
 * answers, and the list filter and redelivery by destination. Every answer is checked against
 * the served OpenAPI document.
 */

let t: TestGateway;
let owner: TestAccount;
let api: ApiClient;
const DEST = "http://127.0.0.1:9/hooks";

beforeAll(async () => {
  t = await startTestGateway();
  const validate = createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, unknown>);
  owner = await t.account();
  api = t.client(owner.key, {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      const text = await res.clone().text();
      validate(init?.method ?? "GET", typeof input === "string" ? input : input instanceof URL ? input.href : input.url, res.status, res.headers, text ? (JSON.parse(text) as unknown) : undefined);
      return res;
    },
  });
});
afterAll(() => t.close());

async function refused(call: Promise<unknown>): Promise<{ status: number; code: string; details: Record<string, unknown> }> {
  const err: ApiError = await refusal(call);
  return { status: err.status, code: err.code, details: err.details };
}

const invalid = (field: string, reason: string) => ({ status: 400, code: "validation_failed", details: { field, reason } });

/** The first destination's secret, as the catalog holds it (sealed with the others). */
async function secretsOf(endpointId: string): Promise<Record<string, string>> {
  const { endpoint } = await t.catalog.getEndpoint({ accountId: owner.accountId, endpointId, includeSealedSecret: true });
  if (endpoint!.sealedDestinationSecrets.length === 0) return {};
  return JSON.parse(Buffer.from((await t.crypto.openSecret({ sealed: endpoint!.sealedDestinationSecrets })).plaintext).toString("utf8")) as Record<string, string>;
}

describe("an endpoint's destinations", () => {
  it("are taken on create: ids assigned, names defaulted, settings defaulted, secrets write-only; forward mirrors the first", async () => {
    const ep = await api.endpoints.create({
      operatingMode: "relay",
      destinations: [
        { name: "billing", url: `${DEST}/billing`, targetSecret: "whsec_billing", filter: { eventType: { $in: ["invoice.paid", "invoice.failed"] }, "headers.x-tenant": "a" } },
        { url: `${DEST}/audit`, keepPath: false, timeoutMs: 500, maxAttempts: 2, transform: "function transform(req) { return req; }" },
        { name: "later", url: `${DEST}/later`, rateLimit: { perSecond: 10, concurrency: 2 }, breaker: { failures: 3 }, paused: true },
      ],
    });
    const [billing, audit, later] = ep.destinations!;
    expect(new Set([billing!.id, audit!.id, later!.id]).size).toBe(3);
    expect(billing).toEqual({
      id: billing!.id,
      name: "billing",
      url: `${DEST}/billing`,
      keepPath: true,
      timeoutMs: 10_000,
      maxAttempts: 6,
      targetSecretSet: true,
      filter: { eventType: { $in: ["invoice.paid", "invoice.failed"] }, "headers.x-tenant": "a" },
      // Every destination has a breaker (design §18): the defaults, closed, nothing held.
      breaker: { failures: 5, probeAfterMs: 30_000, state: "closed", since: null, consecutiveFailures: 0, held: 0, nextProbeAt: null },
      paused: false,
    });
    expect(audit).toMatchObject({ name: "destination-2", keepPath: false, timeoutMs: 500, maxAttempts: 2, targetSecretSet: false, transform: "function transform(req) { return req; }" });
    expect(later).toMatchObject({ rateLimit: { perSecond: 10, concurrency: 2 }, breaker: { failures: 3, probeAfterMs: 30_000, state: "closed", held: 0 }, paused: true });
    expect(ep.forward).toEqual({ url: `${DEST}/billing`, keepPath: true, timeoutMs: 10_000, maxAttempts: 6, targetSecretSet: true });
    expect(JSON.stringify(ep)).not.toContain("whsec_");
    expect(await secretsOf(ep.id)).toEqual({ [billing!.id]: "whsec_billing" });
    expect(await api.endpoints.get(ep.id)).toEqual(ep);
  });

  it("are replaced by PATCH: an id keeps its destination (and its secret unless given), no id is a new one, null removes them all", async () => {
    const ep = await api.endpoints.create({
      operatingMode: "relay",
      destinations: [
        { name: "a", url: `${DEST}/a`, targetSecret: "sa" },
        { name: "b", url: `${DEST}/b`, targetSecret: "sb" },
      ],
    });
    const [a, b] = ep.destinations!;
    const patched = await api.endpoints.update(ep.id, {
      destinations: [
        { id: b!.id, name: "b", url: `${DEST}/b2` },
        { id: a!.id.toUpperCase(), name: "a", url: `${DEST}/a`, targetSecret: null },
        { name: "c", url: `${DEST}/c`, targetSecret: "sc" },
      ],
    });
    const [b2, a2, c] = patched.destinations!;
    expect([b2!.id, a2!.id]).toEqual([b!.id, a!.id]);
    expect([b2!.url, b2!.targetSecretSet, a2!.targetSecretSet, c!.targetSecretSet]).toEqual([`${DEST}/b2`, true, false, true]);
    expect(await secretsOf(ep.id)).toEqual({ [b!.id]: "sb", [c!.id]: "sc" });
    expect(patched.forward?.url).toBe(`${DEST}/b2`);
    // Relay needs a destination: removing them all is refused while it forwards.
    expect(await refused(api.endpoints.update(ep.id, { destinations: null }))).toEqual(invalid("forward", "required"));
    const off = await api.endpoints.update(ep.id, { operatingMode: "capture", destinations: null });
    expect([off.destinations, off.forward]).toEqual([undefined, undefined]);
    expect(await secretsOf(ep.id)).toEqual({});
  });

  it("take `forward` as shorthand for the first: PATCH replaces its settings, keeps its id, name, routing and secret, and leaves the others", async () => {
    const ep = await api.endpoints.create({
      operatingMode: "relay",
      forward: { url: `${DEST}/one`, targetSecret: "s1", name: "primary", filter: { method: "POST" } },
    });
    const [first] = ep.destinations!;
    expect(first).toMatchObject({ name: "primary", filter: { method: "POST" }, targetSecretSet: true });
    const withTwo = await api.endpoints.update(ep.id, { destinations: [{ id: first!.id, url: `${DEST}/one` }, { name: "second", url: `${DEST}/two` }] });
    const second = withTwo.destinations![1]!;
    // Left out in `destinations`, a kept destination's secret stays too.
    expect(withTwo.destinations![0]).toMatchObject({ id: first!.id, name: "primary", targetSecretSet: true });
    const moved = await api.endpoints.update(ep.id, { forward: { url: `${DEST}/moved`, timeoutMs: 2000 } });
    expect(moved.destinations).toEqual([
      { ...withTwo.destinations![0], url: `${DEST}/moved`, timeoutMs: 2000 },
      second,
    ]);
    expect(await secretsOf(ep.id)).toEqual({ [first!.id]: "s1" });
    const unfiltered = await api.endpoints.update(ep.id, { forward: { url: `${DEST}/moved`, filter: null } });
    expect(unfiltered.destinations![0]).not.toHaveProperty("filter");
  });

  it("refuse what is wrong, naming the field and the reason, and store nothing", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", destinations: [{ name: "a", url: `${DEST}/a` }] });
    const create = (destinations: DestinationInput[]) => api.endpoints.create({ operatingMode: "relay", destinations });
    const one = (extra: Partial<DestinationInput>): DestinationInput[] => [{ url: `${DEST}/x`, ...extra }];
    expect(await refused(create([]))).toEqual(invalid("destinations", "length"));
    expect(await refused(create(Array.from({ length: MAX_DESTINATIONS + 1 }, (_, i) => ({ url: `${DEST}/${i}` }))))).toEqual(invalid("destinations", "length"));
    expect(await refused(create([{ name: "same", url: DEST }, { name: "same", url: DEST }]))).toEqual(invalid("destinations.1.name", "duplicate"));
    expect(await refused(create(one({ name: "has space" })))).toEqual(invalid("destinations.0.name", "pattern"));
    expect(await refused(create(one({ id: ep.destinations![0]!.id })))).toEqual(invalid("destinations.0.id", "unknown"));
    expect(await refused(create(one({ transform: "x".repeat(MAX_TRANSFORM_BYTES + 1) })))).toEqual(invalid("destinations.0.transform", "length"));
    expect(await refused(create(one({ rateLimit: { perSecond: 1, perMinute: 60 } })))).toEqual(invalid("destinations.0.rateLimit.perMinute", "format"));
    expect(await refused(create(one({ rateLimit: {} })))).toEqual(invalid("destinations.0.rateLimit.perSecond", "required"));
    expect(await refused(create(one({ breaker: { failures: 0 } })))).toEqual(invalid("destinations.0.breaker.failures", "range"));
    expect(await refused(create(one({ timeoutMs: 50 })))).toEqual(invalid("destinations.0.timeoutMs", "range"));
    expect(await refused(create(one({ nope: 1 } as never)))).toEqual(invalid("destinations.0.nope", "unknown"));
    expect(await refused(create(one({ url: `${t.options.ingestPublicUrl}/h/${ep.id}` })))).toEqual(invalid("destinations.0.url", "loop"));
    expect(await refused(api.endpoints.create({ operatingMode: "relay", forward: { url: DEST }, destinations: one({}) }))).toEqual(invalid("destinations", "unsupported"));
    expect(await refused(api.endpoints.update(ep.id, { destinations: [{ id: "0190a000-0000-7000-8000-0000000000ff", url: DEST }] }))).toEqual(
      invalid("destinations.0.id", "unknown"),
    );
    expect((await api.endpoints.get(ep.id)).destinations).toEqual(ep.destinations);
  });

  it("refuse a filter's operator outside §17's list (unsupported_operator) and a filter too large or too deep", async () => {
    for (const row of REFUSED_FILTERS) {
      const field = row.field ? `destinations.0.filter.${row.field}` : "destinations.0.filter";
      const got = await refused(api.endpoints.create({ operatingMode: "relay", destinations: [{ url: DEST, filter: row.filter as never }] }));
      expect({ filter: row.name, ...got }).toEqual({ filter: row.name, ...invalid(field, row.reason) });
    }
    const viaForward = await refused(api.endpoints.create({ operatingMode: "relay", forward: { url: DEST, filter: { $where: "1" } as never } }));
    expect(viaForward).toEqual(invalid("forward.filter.$where", "unsupported_operator"));
  });

  it("give a proxy endpoint exactly one destination, without a filter (reason unsupported)", async () => {
    const proxy = (body: Record<string, unknown>) => api.endpoints.create({ operatingMode: "proxy", ...body });
    expect(await refused(proxy({ forward: { url: DEST, filter: { method: "POST" } } }))).toEqual(invalid("forward.filter", "unsupported"));
    expect(await refused(proxy({ destinations: [{ url: DEST }, { url: DEST }] }))).toEqual(invalid("destinations", "unsupported"));
    expect(await refused(proxy({ destinations: [{ url: DEST, filter: { method: "POST" } }] }))).toEqual(invalid("destinations.0.filter", "unsupported"));
    const ok = await proxy({ destinations: [{ url: DEST, transform: "function transform(req) { return req; }" }] });
    expect(ok.destinations).toHaveLength(1);
    const relay = await api.endpoints.create({ operatingMode: "relay", destinations: [{ url: DEST }, { url: DEST }] });
    expect(await refused(api.endpoints.update(relay.id, { operatingMode: "proxy" }))).toEqual(invalid("operatingMode", "unsupported"));
    expect(await refused(api.endpoints.update(ok.id, { destinations: [{ url: DEST }, { url: DEST }] }))).toEqual(invalid("destinations", "unsupported"));
  });
});

describe("a destination's transform when saved", () => {
  it("is refused when it could not run at all: no parse, no transform to call", async () => {
    const create = (transform: string) => api.endpoints.create({ operatingMode: "relay", destinations: [{ url: DEST, transform }] });
    expect(await refused(create("function transform(req) { return req;"))).toEqual(invalid("destinations.0.transform", "format"));
    expect(await refused(create("function other(req) { return req; }"))).toEqual(invalid("destinations.0.transform", "required"));
    expect(await refused(api.endpoints.create({ operatingMode: "relay", forward: { url: DEST, transform: "const transform = ;" } }))).toEqual(
      invalid("forward.transform", "format"),
    );
  });
});

describe("POST /v1/endpoints/{endpointId}/destinations/test", () => {
  const PAID = JSON.stringify({ type: "invoice.paid", data: { amount: 500 } });

  async function endpointWithEvent() {
    const ep = await api.endpoints.create({ operatingMode: "relay", destinations: [{ url: DEST }] });
    const [event] = await t.append(owner, ep.id, [
      { path: "/orders?env=prod", body: PAID, canonicalEventType: "invoice.paid", headers: [["Content-Type", "application/json"], ["X-Tenant", "a"]] },
    ]);
    return { ep, eventId: event!.id };
  }

  it("runs the filter as ingest does and the transform as a delivery does, sending nothing", async () => {
    const { ep, eventId } = await endpointWithEvent();
    const test = (destination: Record<string, unknown>) => api.endpoints.testDestination(ep.id, { destination, eventId });
    const plain = await test({ filter: { eventType: "invoice.paid", "headers.x-tenant": "a", "body.data.amount": { $gte: 500 } } });
    expect(plain).toEqual({
      matched: true,
      request: { method: "POST", path: "/orders", query: "env=prod", headers: { "content-type": ["application/json"], "x-tenant": ["a"] }, body: JSON.parse(PAID) },
      error: null,
      durationMs: 0,
    });
    expect(await test({ filter: { "headers.x-tenant": "b" }, transform: "function transform(req) { return req; }" })).toEqual({
      matched: false,
      request: null,
      error: null,
      durationMs: 0,
    });
    const changed = await test({ transform: "function transform(req) { req.headers['x-env'] = ['prod']; req.body.data.amount = 1; req.path = '/v2' + req.path; return req; }" });
    expect(changed.request).toMatchObject({ path: "/v2/orders", headers: { "x-env": ["prod"] }, body: { type: "invoice.paid", data: { amount: 1 } } });
    expect(changed.durationMs).toBeGreaterThan(0);
    expect(await test({ transform: "function transform(req) { return null; }" })).toMatchObject({ matched: true, request: null, error: null });
    const thrown = await test({ transform: "function transform(req) { throw new TypeError('no tenant'); }" });
    expect(thrown).toMatchObject({ matched: true, request: null });
    expect(thrown.error).toContain("no tenant");
    const looped = await test({ transform: "function transform(req) { for (;;) {} }" });
    expect(looped.request).toBeNull();
    expect(looped.error).toMatch(/time|CPU|interrupt/i);
  });

  it("refuses what could not be saved, an unknown event (404), and a key that may not read events (403 events:read)", async () => {
    const { ep, eventId } = await endpointWithEvent();
    expect(await refused(api.endpoints.testDestination(ep.id, { destination: { filter: { $where: "1" } as never }, eventId }))).toEqual(
      invalid("destination.filter.$where", "unsupported_operator"),
    );
    expect(await refused(api.endpoints.testDestination(ep.id, { destination: { transform: "nope(" }, eventId }))).toEqual(invalid("destination.transform", "format"));
    expect(await refused(api.endpoints.testDestination(ep.id, { destination: {}, eventId: "0190a000-0000-7000-8000-0000000000ff" }))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    const writer = (await api.keys.create({ name: "writer", scopes: ["endpoints:write"] })).key;
    expect(await refused(t.client(writer).endpoints.testDestination(ep.id, { destination: {}, eventId }))).toMatchObject({
      status: 403,
      code: "forbidden",
      details: { scope: "events:read" },
    });
    // Refusals read nothing; a test that answers is a read of the event, audited.
    expect((await api.audit.list({ action: "event.read", endpointId: ep.id })).items).toEqual([]);
    await api.endpoints.testDestination(ep.id, { destination: {}, eventId });
    const reads = (await api.audit.list({ action: "event.read", endpointId: ep.id })).items;
    expect(reads.map((e) => [e.eventId, e.details])).toEqual([[eventId, { destinationTest: true }]]);
  });
});

describe("events by destination", () => {
  it("lists the events delivered to a destination; redelivers to the one named, and asks for a name when there are several", async () => {
    const ep = await api.endpoints.create({ operatingMode: "relay", destinations: [{ name: "a", url: "http://127.0.0.1:9/a" }, { name: "b", url: "http://127.0.0.1:9/b" }] });
    const [a, b] = ep.destinations!;
    const [both, onlyB] = await t.append(owner, ep.id, [
      { body: "{}", deliveries: [{ destinationId: a!.id, target: a!.url }, { destinationId: b!.id, target: b!.url }], forwardScheduled: true },
      { body: "{}", deliveries: [{ destinationId: b!.id, target: b!.url }], forwardScheduled: true },
    ]);
    const ids = async (destinationId: string) => (await api.events.list(ep.id, { destinationId })).items.map((e) => e.id);
    expect(await ids(a!.id)).toEqual([both!.id]);
    expect(await ids(b!.id)).toEqual([onlyB!.id, both!.id]);
    expect(await refused(api.events.list(ep.id, { destinationId: "b" }))).toEqual(invalid("destinationId", "format"));

    const detail = await api.events.get(ep.id, both!.id);
    expect((detail.forwardedResponse as { deliveries: { destinationId: string; name: string; state: string }[] }).deliveries.map((d) => [d.destinationId, d.name, d.state])).toEqual([
      [a!.id, "a", "pending"],
      [b!.id, "b", "pending"],
    ]);

    expect(await refused(api.events.redeliver(ep.id, both!.id))).toEqual(invalid("destinationId", "required"));
    // Port 9 on loopback refuses: the attempt is made and recorded, its error named.
    const toB = await api.events.redeliver(ep.id, both!.id, { destinationId: b!.id });
    expect(toB).toMatchObject({ n: 1, trigger: "manual", destinationId: b!.id, error: "connection_refused" });
    const single = await api.events.redeliver(ep.id, onlyB!.id);
    expect(single).toMatchObject({ n: 1, destinationId: b!.id });
    expect(await refused(api.events.redeliver(ep.id, onlyB!.id, { destinationId: "0190a000-0000-7000-8000-0000000000ff" }))).toMatchObject({
      status: 409,
      code: "forward_not_configured",
    });
  });
});
