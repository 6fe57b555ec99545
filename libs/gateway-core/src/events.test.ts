import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { eventDetail, eventList, type EventSummaryJson } from "@whc/api-model";
import { apiClient, createOpenApiValidator } from "@whc/testing";
import { recordingFetch, refusal, startTestGateway, type AppendedCapture, type TestGateway } from "./testing/index.js";

let t: TestGateway;
beforeAll(async () => {
  // The bus is up, so a held `wait` re-queries only every 5 x 400 ms: an earlier answer is the notice's doing.
  t = await startTestGateway({ waitPollMs: 400 });
});
afterAll(async () => {
  await t.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function endpoint(slug?: string): Promise<string> {
  return (await t.a.api.endpoints.create(slug ? { slug } : {})).id;
}

const ids = (page: { items: { id: string }[] }) => page.items.map((e) => e.id);
const newestFirst = (appended: AppendedCapture[]) => appended.map((a) => a.id).reverse();

describe("listing events", () => {
  it("lists newest first by (receivedAt, id), in the documented shape", async () => {
    const ep = await endpoint();
    // One commit: the three may share a millisecond, where the id decides their order.
    const appended = await t.append(t.a, ep, [{ body: "a" }, { body: "b" }, {}]);
    const page = await t.a.api.events.list(ep);
    expect(eventList.strict().parse(page)).toEqual(page);
    expect(ids(page)).toEqual(newestFirst(appended));
    expect(page.items.map((e) => e.decryption)).toEqual(["metadata_only", "ok", "ok"]);
    expect(page.items[2]).toMatchObject({ endpointId: ep, receivedAt: appended[0]!.receivedAt, method: "POST", provider: "generic" });
    expect(page.items.some((e) => "readAt" in e)).toBe(false);
    expect(page.nextBefore).toBeUndefined();
    expect(page).toMatchObject({ nextAfter: appended[2]!.receivedAt, nextAfterId: appended[2]!.id });
  });

  it("pages older with before/beforeId and newer with after/afterId", async () => {
    const ep = await endpoint();
    const e = await t.append(t.a, ep, [{ body: "1" }, { body: "2" }, { body: "3" }, { body: "4" }, { body: "5" }]);
    const [e1, e2, e3, e4, e5] = e.map((x) => x.id);

    const first = await t.a.api.events.list(ep, { limit: "2" });
    expect(ids(first)).toEqual([e5, e4]);
    expect(first).toMatchObject({ nextBefore: e[3]!.receivedAt, nextBeforeId: e4, nextAfterId: e5 });
    const second = await t.a.api.events.list(ep, { limit: "2", before: first.nextBefore!, beforeId: first.nextBeforeId! });
    expect(ids(second)).toEqual([e3, e2]);
    expect(second.nextBeforeId).toBe(e2);
    const last = await t.a.api.events.list(ep, { limit: "2", before: second.nextBefore!, beforeId: second.nextBeforeId! });
    expect(ids(last)).toEqual([e1]);
    expect(last.nextBefore).toBeUndefined();
    expect(last.nextBeforeId).toBeUndefined();

    // The `limit` events strictly newer than the pair that are closest to it, newest first.
    const after1 = await t.a.api.events.list(ep, { limit: "2", after: e[0]!.receivedAt, afterId: e1! });
    expect(ids(after1)).toEqual([e3, e2]);
    expect(after1).toMatchObject({ nextAfter: e[2]!.receivedAt, nextAfterId: e3 });
    const after3 = await t.a.api.events.list(ep, { limit: "2", after: after1.nextAfter!, afterId: after1.nextAfterId! });
    expect(ids(after3)).toEqual([e5, e4]);
    // Nothing newer: an empty page that echoes the pair, so a client can keep polling from it.
    const none = await t.a.api.events.list(ep, { after: after3.nextAfter!, afterId: after3.nextAfterId! });
    expect(none.items).toEqual([]);
    expect(none).toMatchObject({ nextAfter: e[4]!.receivedAt, nextAfterId: e5 });
  });

  it("answers 50 events by default and at most `limit`", async () => {
    const ep = await endpoint();
    const appended = await t.append(t.a, ep, Array.from({ length: 51 }, () => ({})));
    const page = await t.a.api.events.list(ep);
    expect(ids(page)).toEqual(newestFirst(appended).slice(0, 50));
    expect(page.nextBeforeId).toBe(appended[1]!.id);
    expect(ids(await t.a.api.events.list(ep, { limit: "1" }))).toEqual([appended[50]!.id]);
  });

  it("refuses half a cursor pair as validation_failed naming the missing half", async () => {
    const ep = await endpoint();
    const [only] = await t.append(t.a, ep, [{ body: "x" }]);
    const cases: [Record<string, string>, string][] = [
      [{ before: only!.receivedAt }, "beforeId"],
      [{ beforeId: only!.id }, "before"],
      [{ after: only!.receivedAt }, "afterId"],
      [{ afterId: only!.id }, "after"],
    ];
    for (const [query, missing] of cases) {
      const err = await refusal(t.a.api.events.list(ep, query));
      expect(err.status).toBe(400);
      expect(err.code).toBe("validation_failed");
      expect(err.details, JSON.stringify(query)).toEqual({ field: missing, reason: "required" });
      expect(err.headers?.get("x-request-id")).toBe(err.requestId);
    }
  });

  it("refuses limits outside 1..200 and malformed parameters", async () => {
    const ep = await endpoint();
    const cases: [Record<string, string>, string, string][] = [
      [{ limit: "0" }, "limit", "range"],
      [{ limit: "201" }, "limit", "range"],
      [{ wait: "61" }, "wait", "range"],
      [{ from: "yesterday" }, "from", "format"],
      [{ beforeId: "x", before: "2026-01-01T00:00:00Z" }, "beforeId", "format"],
      [{ status: "maybe" }, "status", "format"],
      [{ colour: "red" }, "colour", "unknown"],
    ];
    for (const [query, field, reason] of cases) {
      const err = await refusal(t.a.api.events.list(ep, query as never));
      expect([err.status, err.code], JSON.stringify(query)).toEqual([400, "validation_failed"]);
      expect(err.details, JSON.stringify(query)).toEqual({ field, reason });
    }
    expect((await t.a.api.events.list(ep, { limit: "200" })).items).toEqual([]);
  });

  it("filters by provider, eventType, status, responseCode and the from/to window, all ANDed", async () => {
    const ep = await endpoint();
    const [e1] = await t.append(t.a, ep, [
      { provider: "stripe", canonicalEventType: "invoice.paid", verification: "verified", responseCode: 200, body: "{}" },
    ]);
    await sleep(3);
    const [e2] = await t.append(t.a, ep, [
      { provider: "github", canonicalEventType: "push", verification: "failed", responseCode: 413, body: "{}" },
    ]);
    await sleep(3);
    const [e3] = await t.append(t.a, ep, [
      { provider: "stripe", canonicalEventType: "invoice.created", verification: "failed", responseCode: 200, body: "{}" },
    ]);
    const list = async (q: Record<string, string>) => ids(await t.a.api.events.list(ep, q));
    expect(await list({ provider: "stripe" })).toEqual([e3!.id, e1!.id]);
    expect(await list({ eventType: "push" })).toEqual([e2!.id]);
    expect(await list({ status: "failed" })).toEqual([e3!.id, e2!.id]);
    expect(await list({ status: "verified" })).toEqual([e1!.id]);
    expect(await list({ responseCode: "413" })).toEqual([e2!.id]);
    expect(await list({ provider: "stripe", status: "failed" })).toEqual([e3!.id]);
    expect(await list({ provider: "github", eventType: "invoice.paid" })).toEqual([]);
    expect(e1!.receivedAtMs).toBeLessThan(e2!.receivedAtMs);
    expect(e2!.receivedAtMs).toBeLessThan(e3!.receivedAtMs);
    // from is inclusive, to exclusive.
    expect(await list({ from: e2!.receivedAt })).toEqual([e3!.id, e2!.id]);
    expect(await list({ to: e2!.receivedAt })).toEqual([e1!.id]);
    expect(await list({ from: e2!.receivedAt, to: e3!.receivedAt })).toEqual([e2!.id]);
  });

  it("searches bodies word by word, case-insensitively, leaving out metadata-only events", async () => {
    const ep = await endpoint();
    const [hit, , both] = await t.append(t.a, ep, [{ body: '{"status":"Alpha"}' }, { body: "gamma" }, { body: "alpha, Gamma!" }, {}]);
    const page = await t.a.api.events.list(ep, { search: "ALPHA" });
    expect(ids(page)).toEqual([both!.id, hit!.id]);
    expect(page.searchExcludedMetadataOnlyCount).toBe(1);
    expect(ids(await t.a.api.events.list(ep, { search: "gamma alpha" }))).toEqual([both!.id]);
    expect(ids(await t.a.api.events.list(ep, { search: "delta" }))).toEqual([]);
  });
});

describe("wait", () => {
  it("answers as soon as a capture notice arrives", async () => {
    const ep = await endpoint();
    const [old] = await t.append(t.a, ep, [{ body: "old" }]);
    const before = t.captureSubscribers();
    const started = Date.now();
    const held = t.a.api.events.list(ep, { after: old!.receivedAt, afterId: old!.id, wait: "20s" });
    // Held: subscribed to the notices, its first (empty) query done.
    while (t.captureSubscribers() === before) await sleep(5);
    await sleep(150);

    const appended = await t.append(t.a, ep, [{ body: "new" }]);
    const notifiedAt = Date.now();
    t.notify(t.a, ep, appended);
    const page = await held;
    expect(ids(page)).toEqual([appended[0]!.id]);
    // The re-query safety net runs every 2 s here: only the notice can answer this soon.
    expect(Date.now() - notifiedAt).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(t.captureSubscribers()).toBe(before);
  });

  it("does not miss a capture notice that arrives while it queries", async () => {
    const ep = await endpoint();
    const [old] = await t.append(t.a, ep, [{ body: "old" }]);
    let appended: AppendedCapture[] = [];
    // The capture commits just after the held request's first query saw nothing, and its
    // notice is out before the request starts pausing: the subscription was already open.
    t.hooks.afterListEvents = async () => {
      t.hooks.afterListEvents = undefined;
      appended = await t.append(t.a, ep, [{ body: "new" }]);
      t.notify(t.a, ep, appended);
    };
    const started = Date.now();
    const page = await t.a.api.events.list(ep, { after: old!.receivedAt, afterId: old!.id, wait: "20" });
    expect(ids(page)).toEqual([appended[0]!.id]);
    // By the notice, not by the re-query 2 s later.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("answers an empty page after the wait when nothing new arrives", async () => {
    const ep = await endpoint();
    const [old] = await t.append(t.a, ep, [{ body: "old" }]);
    const started = Date.now();
    const page = await t.a.api.events.list(ep, { after: old!.receivedAt, afterId: old!.id, wait: "1" });
    const elapsed = Date.now() - started;
    expect(page.items).toEqual([]);
    expect(page).toMatchObject({ nextAfter: old!.receivedAt, nextAfterId: old!.id });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3000);
  });

  it("lets go of a held request when its client hangs up", async () => {
    const ep = await endpoint();
    const before = t.captureSubscribers();
    const hangUp = new AbortController();
    const held = t.a.api.events.list(ep, { wait: "30" }, hangUp.signal).catch((e: unknown) => e);
    while (t.captureSubscribers() === before) await sleep(5);
    hangUp.abort();
    expect(await held).toBeInstanceOf(Error);
    const gaveUpAt = Date.now();
    while (t.captureSubscribers() !== before && Date.now() - gaveUpAt < 3000) await sleep(10);
    expect(t.captureSubscribers()).toBe(before);
    expect(Date.now() - gaveUpAt).toBeLessThan(1000);
  });

  it("does not hold a page that has events", async () => {
    const ep = await endpoint();
    await t.append(t.a, ep, [{ body: "x" }]);
    const started = Date.now();
    expect((await t.a.api.events.list(ep, { wait: "30" })).items).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("one event", () => {
  it("gets the event with its body decrypted and headers as captured, and sets readAt once", async () => {
    const ep = await endpoint();
    const [json, binary, bare] = await t.append(t.a, ep, [
      {
        method: "PUT",
        path: "/orders/7?x=1",
        headers: [
          ["Content-Type", "application/json"],
          ["X-Twice", "1"],
          ["x-other", "o"],
          ["X-Twice", "2"],
        ],
        body: '{"total":"12.50 €"}',
        provider: "stripe",
        canonicalEventType: "invoice.paid",
        verification: "verified",
      },
      { body: Buffer.from([0x00, 0xff, 0x10, 0x80]) },
      {},
    ]);
    expect((await t.a.api.events.list(ep)).items.some((e) => e.readAt !== undefined)).toBe(false);

    const detail = await t.a.api.events.get(ep, json!.id);
    expect(eventDetail.strict().parse(detail)).toEqual(detail);
    expect(detail).toMatchObject({
      id: json!.id,
      endpointId: ep,
      method: "PUT",
      provider: "stripe",
      canonicalEventType: "invoice.paid",
      verification: "verified",
      decryption: "ok",
      body: '{"total":"12.50 €"}',
      bodyEncoding: "utf8",
      remoteIp: "127.0.0.1",
    });
    expect(detail.headers).toEqual({ "Content-Type": ["application/json"], "X-Twice": ["1", "2"], "x-other": ["o"] });
    expect(detail.readAt).toBeDefined();
    const readAt = detail.readAt!;
    expect(Date.parse(readAt)).toBeGreaterThanOrEqual(json!.receivedAtMs);

    const listed = await t.a.api.events.list(ep);
    expect(listed.items.find((e) => e.id === json!.id)?.readAt).toBe(readAt);
    expect(listed.items.find((e) => e.id === binary!.id)?.readAt).toBeUndefined();
    await sleep(5);
    expect((await t.a.api.events.get(ep, json!.id)).readAt).toBe(readAt);

    expect(await t.a.api.events.get(ep, binary!.id)).toMatchObject({ body: "AP8QgA==", bodyEncoding: "base64", decryption: "ok" });
    const meta = await t.a.api.events.get(ep, bare!.id);
    expect(meta.decryption).toBe("metadata_only");
    expect(meta.body).toBeUndefined();
  });

  it("shows the capture's sub-path and query as `path`, exactly, as the OpenAPI document describes it", async () => {
    const doc = (await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, any>;
    expect(doc.components.schemas.EventDetail.properties.path).toMatchObject({ type: "string", "x-extension": true });
    const api = apiClient(t.url, t.a.key, createOpenApiValidator(doc));
    const ep = await endpoint();
    const [withPath, bare] = await t.append(t.a, ep, [{ path: "/a/b?x=1&y=%20", body: "{}" }, { body: "{}" }]);

    const detail = await api.get(`/v1/endpoints/${ep}/events/${withPath!.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.path).toBe("/a/b?x=1&y=%20");
    expect(eventDetail.strict().parse(detail.body).path).toBe("/a/b?x=1&y=%20");
    expect((await api.get(`/v1/endpoints/${ep}/events/${bare!.id}`)).body.path).toBe("");
    // The list's items stay as they were.
    expect((await api.get(`/v1/endpoints/${ep}/events`)).body.items.some((e: object) => "path" in e)).toBe(false);
  });

  it("answers an unknown event and another account's event with the same 404", async () => {
    const ep = await endpoint();
    const [ev] = await t.append(t.a, ep, [{ body: "mine" }]);
    const unknown = await refusal(t.a.api.events.get(ep, "01a20000-0000-7000-8000-000000000000"));
    const foreign = await refusal(t.b.api.events.get(ep, ev!.id));
    expect([unknown.status, unknown.code, unknown.message]).toEqual([404, "not_found", foreign.message]);
    expect([foreign.status, foreign.code, foreign.details]).toEqual([404, "not_found", {}]);
  });

  it("marks nothing read when another account asks for the event", async () => {
    const ep = await endpoint();
    const [ev] = await t.append(t.a, ep, [{ body: "mine" }]);
    const theirs = (await t.b.api.endpoints.create({})).id;
    expect((await refusal(t.b.api.events.get(ep, ev!.id))).status).toBe(404);
    expect((await refusal(t.b.api.events.get(theirs, ev!.id))).status).toBe(404);
    expect((await t.a.api.events.list(ep)).items[0]!.readAt).toBeUndefined();
  });

  it("deletes an event with 204, and again with 204", async () => {
    const ep = await endpoint();
    const [gone, kept] = await t.append(t.a, ep, [{ body: "a" }, { body: "b" }]);
    const rec = recordingFetch();
    const api = t.client(t.a.key, { fetch: rec.fetch });
    await api.events.delete(ep, gone!.id);
    expect(rec.last().status).toBe(204);
    await api.events.delete(ep, gone!.id);
    expect(rec.last().status).toBe(204);
    expect((await refusal(api.events.get(ep, gone!.id))).status).toBe(404);
    expect(ids(await api.events.list(ep))).toEqual([kept!.id]);
    // The endpoint must still be the caller's: a foreign one is 404, not 204.
    expect((await refusal(t.b.api.events.delete(ep, kept!.id))).status).toBe(404);
    expect(ids(await api.events.list(ep))).toEqual([kept!.id]);
  });

  it("exports cURL with Authorization masked unless unmasked=true", async () => {
    const ep = await endpoint();
    const [ev] = await t.append(t.a, ep, [
      {
        path: "/hooks/ci",
        headers: [
          ["Content-Type", "application/json"],
          ["Authorization", "Bearer tok_live_123"],
          ["X-Plain", "visible"],
        ],
        body: '{"a":1}',
      },
    ]);
    const masked = await t.a.api.events.curl(ep, ev!.id);
    expect(masked.headersMasked).toBe(true);
    expect(masked.command).not.toContain("tok_live_123");
    expect(masked.command).toContain("X-Plain: visible");
    expect(masked.command).toContain(`'${t.options.ingestPublicUrl}/h/${ep}/hooks/ci'`);
    expect(masked.command).toMatch(/ --data-(raw|binary) \$?'\{"a":1\}'$/);
    expect(masked.command).not.toContain("\n");
    expect(masked.bodyOmitted).toBe(false);

    const unmasked = await t.a.api.events.curl(ep, ev!.id, { unmasked: true });
    expect(unmasked.headersMasked).toBe(false);
    expect(unmasked.command).toContain("Authorization: Bearer tok_live_123");
    expect(unmasked.byteIdentical).toBe(true);

    const explicitFalse = await fetch(`${t.url}/v1/endpoints/${ep}/events/${ev!.id}/curl?unmasked=false`, {
      headers: { authorization: `Bearer ${t.a.key}` },
    });
    expect(((await explicitFalse.json()) as { command: string }).command).not.toContain("tok_live_123");
    const bad = await refusal(t.a.api.request("GET", `/v1/endpoints/${ep}/events/${ev!.id}/curl`, { query: { unmasked: "yes" } }));
    expect(bad.details).toEqual({ field: "unmasked", reason: "format" });
    // Reading the export is not reading the event.
    expect((await t.a.api.events.list(ep)).items[0]!.readAt).toBeUndefined();
  });
});

describe("follow()", () => {
  it("yields events appended after it started, oldest first, each once, through a 503, until aborted", async () => {
    const ep = await endpoint();
    const [earlier] = await t.append(t.a, ep, [{ body: "before" }]);

    let longPolls = 0;
    let failNext = false;
    const retries: number[] = [];
    const flaky: typeof fetch = async (input, init) => {
      if (String(input).includes("wait=")) longPolls += 1;
      if (failNext) {
        failNext = false;
        const reply = { error: "service_unavailable", message: "The service is temporarily unavailable; retry shortly.", details: {}, requestId: "r" };
        return new Response(JSON.stringify(reply), { status: 503, headers: { "content-type": "application/json", "retry-after": "5" } });
      }
      return fetch(input, init);
    };
    const controller = new AbortController();
    const follower = t
      .client(t.a.key, { fetch: flaky })
      .follow(ep, { waitSeconds: 10, backoff: { initialMs: 20, maxMs: 40 }, signal: controller.signal, onRetry: (e) => retries.push(e.status) });
    const next = () => follower.next();

    const first = next();
    while (longPolls === 0) await sleep(5);
    const batch = await t.append(t.a, ep, [{ body: "one" }, { body: "two" }]);
    t.notify(t.a, ep, batch);
    const seen: EventSummaryJson[] = [];
    seen.push((await first).value as EventSummaryJson);
    seen.push((await next()).value as EventSummaryJson);
    expect(seen.map((e) => e.id)).toEqual(batch.map((e) => e.id));

    // The next call fails with 503; the follower pauses and carries on from its cursor.
    failNext = true;
    const third = await t.append(t.a, ep, [{ body: "three" }]);
    seen.push((await next()).value as EventSummaryJson);
    expect(retries).toEqual([503]);

    const pending = next();
    while (longPolls < 4) await sleep(5);
    const fourth = await t.append(t.a, ep, [{ body: "four" }]);
    t.notify(t.a, ep, fourth);
    seen.push((await pending).value as EventSummaryJson);

    expect(seen.map((e) => e.id)).toEqual([...batch, ...third, ...fourth].map((e) => e.id));
    expect(seen.map((e) => e.id)).not.toContain(earlier!.id);

    // Aborting ends a held long poll at once.
    const last = next();
    await sleep(50);
    const abortedAt = Date.now();
    controller.abort();
    expect(await last).toEqual({ done: true, value: undefined });
    expect(Date.now() - abortedAt).toBeLessThan(1000);
  });
});
