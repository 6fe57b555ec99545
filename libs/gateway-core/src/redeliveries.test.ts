import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type { ApiClient, ApiError, EndpointJson } from "@whc/api-model";
import { createOpenApiValidator } from "@whc/testing";
import { refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/*
 * Bulk redelivery's /v1 surface (design §18; ADR 0089): the dry run's count, a job started,
 * read, listed and canceled, its audit entry, and every refusal with its code. The runner that
 * walks jobs is replay's (tested in replay-core and end to end); here nothing sends. Every
 * answer is checked against the served OpenAPI document.
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

/** A relay endpoint with two destinations and `n` captures delivered to both (attempt 1 each), half of them invoice.paid. */
async function deliveredTo(n: number): Promise<{ ep: EndpointJson; ids: string[]; a: string; b: string }> {
  const ep = await api.endpoints.create({ operatingMode: "relay", destinations: [{ name: "a", url: `${DEST}/a` }, { name: "b", url: `${DEST}/b` }] });
  const [a, b] = ep.destinations!.map((d) => d.id) as [string, string];
  const appended = await t.append(
    owner,
    ep.id,
    Array.from({ length: n }, (_, i) => ({
      body: `{"n":${i}}`,
      canonicalEventType: i % 2 === 0 ? "invoice.paid" : "invoice.failed",
      deliveries: [
        { destinationId: a, target: `${DEST}/a` },
        { destinationId: b, target: `${DEST}/b` },
      ],
      forwardScheduled: true,
    })),
  );
  // The outbox worker's part, done by hand: every delivery claimed and delivered (a's) or exhausted (b's).
  for (;;) {
    const { deliveries } = await t.catalog.claimDeliveries({ owner: "test", limit: 100, claimMs: 60_000n });
    if (deliveries.length === 0) break;
    for (const c of deliveries) {
      const delivered = c.destinationId === a;
      await t.catalog.recordForwardAttempt({
        accountId: c.accountId,
        endpointId: c.endpointId,
        eventId: c.eventId,
        destinationId: c.destinationId,
        attempt: { n: c.attempt, trigger: "initial", atMs: BigInt(Date.now()), url: DEST, durationMs: 1n, status: delivered ? 200 : 503, headers: [], bodyTruncated: false, error: "", requestSha256: "", message: "" },
        state: delivered ? "delivered" : "exhausted",
        claimOwner: "test",
      });
    }
  }
  return { ep, ids: appended.map((x) => x.id), a, b };
}

describe("bulk redelivery", () => {
  it("counts what a job would redo (dry run), starts one with that total, and shows it, listed newest first", async () => {
    const { ep, b } = await deliveredTo(4);
    expect(await api.redeliveries.count(ep.id)).toEqual({ count: 8 });
    expect(await api.redeliveries.count(ep.id, { destinationId: b })).toEqual({ count: 4 });
    expect(await api.redeliveries.count(ep.id, { eventType: "invoice.paid" })).toEqual({ count: 4 });
    expect(await api.redeliveries.count(ep.id, { forwardState: "exhausted", status: "unverified", from: "2020-01-01T00:00:00Z" })).toEqual({ count: 8 });
    expect(await api.redeliveries.count(ep.id, { to: "2020-01-01T00:00:00Z" })).toEqual({ count: 0 });
    // A dry run starts nothing.
    expect((await api.redeliveries.list(ep.id)).items).toEqual([]);

    const res = await fetch(`${t.url}/v1/endpoints/${ep.id}/redeliveries`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.key}`, "content-type": "application/json" },
      body: JSON.stringify({ filter: { destinationId: b } }),
    });
    expect(res.status).toBe(202);
    const job = (await res.json()) as Awaited<ReturnType<ApiClient["redeliveries"]["get"]>>;
    expect(job).toMatchObject({ endpointId: ep.id, state: "running", total: 4, queued: 0, done: 0, failed: 0, filter: { destinationId: b }, finishedAt: null });
    expect(job.createdBy.keyPrefix).toBe(owner.key.slice(0, job.createdBy.keyPrefix.length));
    expect(await api.redeliveries.get(ep.id, job.id)).toEqual(job);
    const second = await api.redeliveries.start(ep.id, { eventType: "invoice.failed", destinationId: b.toUpperCase() });
    expect(second).toMatchObject({ total: 2, filter: { eventType: "invoice.failed", destinationId: b } });
    expect((await api.redeliveries.list(ep.id)).items.map((j) => j.id)).toEqual([second.id, job.id]);

    // Each start is in the audit log with its filter and total; a dry run is not.
    const entries = (await api.audit.list({ action: "redelivery.started", endpointId: ep.id })).items;
    expect(entries.map((e) => e.details)).toEqual([
      { filter: { eventType: "invoice.failed", destinationId: b.toUpperCase() }, jobId: second.id, total: 2 },
      { filter: { destinationId: b }, jobId: job.id, total: 4 },
    ]);
  });

  it("cancels a running job (audited); a finished one is answered as it is", async () => {
    const { ep } = await deliveredTo(2);
    const job = await api.redeliveries.start(ep.id);
    const canceled = await api.redeliveries.cancel(ep.id, job.id);
    expect(canceled).toMatchObject({ id: job.id, state: "canceled", total: 0, queued: 0 });
    expect(canceled.finishedAt).not.toBeNull();
    expect(await api.redeliveries.cancel(ep.id, job.id)).toEqual(canceled);
    const entries = (await api.audit.list({ action: "redelivery.canceled", endpointId: ep.id })).items;
    expect(entries.map((e) => e.details)).toEqual([{ jobId: job.id, queued: 0 }]);
    // Nothing to redo: done at once.
    const empty = await api.redeliveries.start(ep.id, { eventType: "nothing.matches" });
    expect(empty).toMatchObject({ state: "done", total: 0 });
  });

  it("refuses bad input with validation_failed naming the field", async () => {
    const { ep } = await deliveredTo(1);
    const post = (body: unknown) => api.request("POST", `/v1/endpoints/${ep.id}/redeliveries`, { body });
    expect(await refused(post({ filter: { search: "x" } }))).toEqual(invalid("filter.search", "unknown"));
    expect(await refused(post({ filter: { limit: 5 } }))).toEqual(invalid("filter.limit", "unknown"));
    expect(await refused(post({ filters: {} }))).toEqual(invalid("filters", "unknown"));
    expect(await refused(post({ filter: { destinationId: "not-a-uuid" } }))).toMatchObject({ status: 400, details: { field: "filter.destinationId" } });
    expect(await refused(post({ filter: { from: "yesterday" } }))).toMatchObject({ status: 400, details: { field: "filter.from" } });
    expect(await refused(post({ filter: { responseCode: "500" } }))).toMatchObject({ status: 400, details: { field: "filter.responseCode", reason: "type" } });
    expect(await refused(post({ filter: { forwardState: "lost" } }))).toMatchObject({ status: 400, details: { field: "filter.forwardState" } });
    expect(await refused(post({ filter: { eventType: "x".repeat(201) } }))).toMatchObject({ status: 400, details: { field: "filter.eventType", reason: "length" } });
    expect(await refused(post({ filter: [] }))).toMatchObject({ status: 400, details: { field: "filter" } });
    expect(await refused(post({ dryRun: "yes" }))).toMatchObject({ status: 400, details: { field: "dryRun", reason: "type" } });
    expect(await refused(post({ filter: { eventType: "x".repeat(70_000) } }))).toMatchObject({ status: 413, code: "payload_too_large" });
    expect(await refused(api.request("GET", `/v1/endpoints/${ep.id}/redeliveries/not-a-uuid`))).toEqual(invalid("jobId", "format"));
    expect(await refused(api.request("GET", `/v1/endpoints/not-a-uuid/redeliveries`))).toEqual(invalid("endpointId", "format"));
    expect(await refused(api.redeliveries.get(ep.id, "01a20000-0000-7000-8000-000000000000"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await refused(api.redeliveries.cancel(ep.id, "01a20000-0000-7000-8000-000000000000"))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("answers 409 forward_not_configured without the destinations it would redo, 404 for an unknown endpoint", async () => {
    const plain = await api.endpoints.create({});
    expect(await refused(api.redeliveries.count(plain.id))).toMatchObject({ status: 409, code: "forward_not_configured" });
    expect(await refused(api.redeliveries.start(plain.id))).toMatchObject({ status: 409, code: "forward_not_configured" });
    const { ep } = await deliveredTo(1);
    expect(await refused(api.redeliveries.start(ep.id, { destinationId: "01a20000-0000-7000-8000-000000000000" }))).toMatchObject({ status: 409, code: "forward_not_configured" });
    expect(await refused(api.redeliveries.count("01a20000-0000-7000-8000-000000000000"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await refused(api.redeliveries.list("01a20000-0000-7000-8000-000000000000"))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("refuses a job past the account's running jobs with 429 quota_exceeded", async () => {
    const acct = await t.account();
    const other = t.client(acct.key);
    const ep = await other.endpoints.create({ operatingMode: "relay", destinations: [{ url: `${DEST}/q` }] });
    // Three captures whose deliveries a redeliver (by hand here) delivered.
    await t.append(acct, ep.id, [1, 2, 3].map(() => ({ body: "x", deliveries: [{ destinationId: ep.destinations![0]!.id, target: DEST }] })));
    const { items } = await other.events.list(ep.id);
    for (const e of items) {
      await t.catalog.beginForwardAttempt({ accountId: acct.accountId, endpointId: ep.id, eventId: e.id, destinationId: ep.destinations![0]!.id, target: DEST });
      await t.catalog.recordForwardAttempt({
        accountId: acct.accountId,
        endpointId: ep.id,
        eventId: e.id,
        destinationId: ep.destinations![0]!.id,
        attempt: { n: 1, trigger: "manual", atMs: BigInt(Date.now()), url: DEST, durationMs: 1n, status: 200, headers: [], bodyTruncated: false, error: "", requestSha256: "", message: "" },
      });
    }
    for (let i = 0; i < 3; i++) expect((await other.redeliveries.start(ep.id)).state).toBe("running");
    expect(await refused(other.redeliveries.start(ep.id))).toEqual({ status: 429, code: "quota_exceeded", details: { quota: "redelivery_jobs", limit: 3 } });
    // A dry run is never refused by it; another account's jobs do not count.
    expect(await other.redeliveries.count(ep.id)).toEqual({ count: 3 });
    const { ep: mine } = await deliveredTo(1);
    expect((await api.redeliveries.start(mine.id)).state).toBe("running");
  });
});
