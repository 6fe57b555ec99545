import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { auditList, type AuditEntryJson } from "@whc/api-model";
import { recordingFetch, refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/**
 * The audit log over /v1 (design §15; ADR 0053): each audited action writes one entry naming
 * the key, the address and the request; lists write none; no entry holds a body or a secret;
 * the log pages and filters as events do.
 */
let t: TestGateway;
let owner: TestAccount;
let sink: http.Server;
let sinkUrl: string;

const BODY = "card=4242424242424242&cvc=987";
const SECRET = "whsec_audit_never_shown";
const TARGET_SECRET = "whsec_target_never_shown";

beforeAll(async () => {
  t = await startTestGateway();
  owner = await t.account();
  sink = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => sink.close(() => resolve()));
  await t.close();
});

/** Every entry of the account, oldest first. */
async function entries(key = owner.key): Promise<AuditEntryJson[]> {
  const out: AuditEntryJson[] = [];
  let cursor: { before: string; beforeId: string } | undefined;
  do {
    const page = await t.client(key).audit.list({ limit: "200", ...(cursor ?? {}) });
    out.push(...page.items);
    cursor = page.nextBefore && page.nextBeforeId ? { before: page.nextBefore, beforeId: page.nextBeforeId } : undefined;
  } while (cursor);
  return out.reverse();
}

describe("the audit log", () => {
  it("records each audited action once, with the key, address and request, and nothing for lists", async () => {
    const rec = recordingFetch();
    const api = t.client(owner.key, { fetch: rec.fetch });
    const requestIdOf = () => rec.last().headers.get("x-request-id")!;
    const expected: { action: string; requestId: string; endpointId?: string; eventId?: string; details?: Record<string, unknown> }[] = [];

    const ep = await api.endpoints.create({ slug: "audited", secret: SECRET, forward: { url: `${sinkUrl}/in` } });
    expected.push({ action: "endpoint.created", requestId: requestIdOf(), endpointId: ep.id, details: { slug: "audited" } });
    await api.endpoints.update(ep.id, { displayName: "Audited", secret: `${SECRET}-2` });
    expected.push({ action: "endpoint.updated", requestId: requestIdOf(), endpointId: ep.id, details: { fields: ["displayName", "secret"] } });
    const [event] = await t.append(owner, ep.id, [{ body: BODY, headers: [["Authorization", "Bearer sender-token"]] }]);
    const eventId = event!.id;

    // Lists are not audited.
    await api.endpoints.list();
    await api.events.list(ep.id);
    await api.keys.list();
    await api.audit.list();

    expect((await api.events.get(ep.id, eventId)).body).toBe(BODY);
    expected.push({ action: "event.read", requestId: requestIdOf(), endpointId: ep.id, eventId });
    await api.events.curl(ep.id, eventId, { unmasked: true });
    expected.push({ action: "event.curl_exported", requestId: requestIdOf(), endpointId: ep.id, eventId, details: { unmasked: true } });
    const exported = await (await api.events.export(ep.id)).getReader().read();
    expect(exported.done).toBe(false);
    // The export's entry is written when its stream ends.
    await expect.poll(async () => (await entries()).some((e) => e.action === "events.exported")).toBe(true);
    expected.push({ action: "events.exported", requestId: requestIdOf(), endpointId: ep.id, details: { count: 1, complete: true } });
    const replayed = await api.events.replay(ep.id, eventId, { target_url: `${sinkUrl}/replay?token=hidden`, target_secret: TARGET_SECRET });
    expected.push({
      action: "event.replayed",
      requestId: requestIdOf(),
      endpointId: ep.id,
      eventId,
      details: { audit_id: replayed.audit_id, result: "delivered", mode: "resign", target: sinkUrl },
    });
    await api.events.redeliver(ep.id, eventId);
    expected.push({ action: "event.redelivered", requestId: requestIdOf(), endpointId: ep.id, eventId, details: { attempt: 1, status: 200 } });
    const minted = await api.keys.create({ name: "ci", scopes: ["events:read"], endpointIds: [ep.id] });
    expected.push({
      action: "key.created",
      requestId: requestIdOf(),
      details: { id: minted.id, prefix: minted.prefix, name: "ci", scopes: ["events:read"], endpointIds: [ep.id] },
    });
    await api.keys.revoke(minted.id);
    expected.push({ action: "key.revoked", requestId: requestIdOf(), details: { id: minted.id, prefix: minted.prefix, name: "ci" } });
    const channel = await api.alerts.create({ name: "ops", type: "slack", url: `${sinkUrl}/services/T0/B0/slack-credential`, events: ["delivery.exhausted"], endpointIds: [ep.id] });
    expected.push({
      action: "alert_channel.created",
      requestId: requestIdOf(),
      details: { id: channel.id, name: "ops", type: "slack", origin: sinkUrl, events: ["delivery.exhausted"], endpointIds: [ep.id] },
    });
    const signed = await api.alerts.create({ name: "pager", type: "webhook", url: `${sinkUrl}/alerts`, events: ["test"] });
    expected.push({ action: "alert_channel.created", requestId: requestIdOf(), details: { id: signed.id, name: "pager", type: "webhook", origin: sinkUrl, events: ["test"], endpointIds: [] } });
    await api.alerts.test(signed.id);
    await api.alerts.delete(channel.id);
    expected.push({ action: "alert_channel.deleted", requestId: requestIdOf(), details: { id: channel.id, name: "ops" } });
    await api.events.delete(ep.id, eventId);
    expected.push({ action: "event.deleted", requestId: requestIdOf(), endpointId: ep.id, eventId });
    await api.endpoints.delete(ep.id);
    expected.push({ action: "endpoint.deleted", requestId: requestIdOf(), endpointId: ep.id });

    const log = await entries();
    for (const entry of log) expect(auditList.shape.items.element.strict().parse(entry)).toEqual(entry);
    expect(log.map((e) => e.action)).toEqual(expected.map((e) => e.action));
    const keyId = (await t.client(owner.key).keys.list()).items.find((k) => owner.key.startsWith(k.prefix))!.id;
    log.forEach((entry, i) => {
      const want = expected[i]!;
      expect(entry, want.action).toMatchObject({
        keyId,
        keyPrefix: owner.key.slice(0, 10),
        remoteIp: "127.0.0.1",
        requestId: want.requestId,
        endpointId: want.endpointId ?? null,
        eventId: want.eventId ?? null,
        details: want.details ?? {},
      });
    });

    // One event's history: what was done to that event only, newest first; it needs its endpoint.
    const history = await t.client(owner.key).audit.list({ endpointId: ep.id, eventId });
    expect(history.items.map((e) => e.action)).toEqual(expected.filter((e) => e.eventId === eventId).map((e) => e.action).reverse());
    await expect(t.client(owner.key).audit.list({ eventId })).rejects.toMatchObject({ status: 400, code: "validation_failed" });

    // Nothing in any entry is a body, a secret or a key (design §15).
    const text = JSON.stringify(log);
    for (const secret of [BODY, "4242424242424242", SECRET, TARGET_SECRET, "sender-token", "hidden", owner.key, minted.key, "slack-credential", signed.secret!]) {
      expect(text).not.toContain(secret);
    }
  });

  it("records the caller behind a trusted proxy from X-Forwarded-For, and the socket peer otherwise", async () => {
    const forwarded = { headers: { "x-forwarded-for": "198.51.100.23, 203.0.113.9" } };
    // Not trusted here: a caller cannot name its own address.
    const ep = await t.client(owner.key, forwarded).endpoints.create({ slug: "behind-nobody" });
    expect((await entries()).find((e) => e.endpointId === ep.id)).toMatchObject({ action: "endpoint.created", remoteIp: "127.0.0.1" });

    const proxied = await startTestGateway({ trustedProxies: ["127.0.0.1"] });
    try {
      const acct = await proxied.account();
      const created = await proxied.client(acct.key, forwarded).endpoints.create({ slug: "behind-proxy" });
      const page = await proxied.client(acct.key).audit.list({ endpointId: created.id });
      expect(page.items).toMatchObject([{ action: "endpoint.created", remoteIp: "203.0.113.9" }]);
    } finally {
      await proxied.close();
    }
  });

  it("records a configuration applied (config.applied): the file's hash, the changes made, the first slugs of each kind", async () => {
    const acct = await t.account();
    const created = Array.from({ length: 12 }, (_, i) => `svc-${i}`);
    await acct.api.audit.configApplied({ sha256: "ab".repeat(32), total: 14, applied: 13, created, updated: ["billing"] });
    const [entry] = (await acct.api.audit.list({ action: "config.applied" })).items;
    expect(entry).toMatchObject({
      action: "config.applied",
      endpointId: null,
      details: {
        sha256: "ab".repeat(32),
        total: 14,
        applied: 13,
        complete: false,
        created: { count: 12, slugs: created.slice(0, 10) },
        updated: { count: 1, slugs: ["billing"] },
        deleted: { count: 0, slugs: [] },
      },
    });
    for (const bad of [{ sha256: "nope", total: 1, applied: 1 }, { sha256: "ab".repeat(32), total: 1, applied: 2 }, { sha256: "ab".repeat(32), total: 1, applied: 1, created: ["Not A Slug"] }]) {
      expect((await refusal(acct.api.audit.configApplied(bad))).status).toBe(400);
    }
    expect((await acct.api.audit.list({ action: "config.applied" })).items).toHaveLength(1);
  });

  it("pages newest first with the events' cursors, filters, and refuses a half cursor or an unknown action", async () => {
    const acct = await t.account();
    const eps = [await acct.api.endpoints.create({ slug: "one" }), await acct.api.endpoints.create({ slug: "two" })];
    for (const ep of eps) for (const name of ["a", "b", "c"]) await acct.api.endpoints.update(ep.id, { displayName: name });
    const all = await entries(acct.key);
    expect(all).toHaveLength(8);

    const first = await acct.api.audit.list({ limit: "3" });
    expect(first.items.map((e) => e.id)).toEqual(all.slice(-3).reverse().map((e) => e.id));
    const second = await acct.api.audit.list({ limit: "3", before: first.nextBefore!, beforeId: first.nextBeforeId! });
    expect(second.items.map((e) => e.id)).toEqual(all.slice(-6, -3).reverse().map((e) => e.id));
    const newer = await acct.api.audit.list({ limit: "2", after: all[0]!.at, afterId: all[0]!.id });
    expect(newer.items.map((e) => e.id)).toEqual([all[2]!.id, all[1]!.id]);
    expect(newer).toMatchObject({ nextAfter: all[2]!.at, nextAfterId: all[2]!.id });

    const ofTwo = await acct.api.audit.list({ endpointId: eps[1]!.id, action: "endpoint.updated" });
    expect(ofTwo.items.map((e) => e.id)).toEqual(all.filter((e) => e.endpointId === eps[1]!.id && e.action === "endpoint.updated").reverse().map((e) => e.id));
    expect((await acct.api.audit.list({ from: all[7]!.at, to: new Date(Date.parse(all[7]!.at) + 1).toISOString() })).items.map((e) => e.id)).toContain(all[7]!.id);
    // Another account's log is its own.
    expect((await owner.api.audit.list({ endpointId: eps[0]!.id })).items).toEqual([]);

    for (const [query, field] of [
      [{ before: all[0]!.at }, "beforeId"],
      [{ action: "event.peeked" }, "action"],
      [{ limit: "201" }, "limit"],
    ] as const) {
      const err = await refusal(acct.api.audit.list(query as Record<string, string>));
      expect([err.status, err.code, err.details.field], JSON.stringify(query)).toEqual([400, "validation_failed", field]);
    }
  });

  it("shows a key restricted to endpoints only the entries of one of its own, named", async () => {
    const acct = await t.account();
    const mine = await acct.api.endpoints.create({ slug: "mine" });
    const other = await acct.api.endpoints.create({ slug: "other" });
    const restricted = t.client((await acct.api.keys.create({ name: "auditor", scopes: ["audit:read"], endpointIds: [mine.id] })).key);
    const refused = await refusal(restricted.audit.list());
    expect([refused.status, refused.code, refused.details]).toEqual([403, "forbidden", { field: "endpointId" }]);
    expect((await restricted.audit.list({ endpointId: mine.id })).items.map((e) => e.action)).toEqual(["endpoint.created"]);
    expect((await restricted.audit.list({ endpointId: other.id })).items).toEqual([]);
  });
});
