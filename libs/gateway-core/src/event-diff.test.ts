import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHash } from "node:crypto";
import { eventDiff } from "@whc/api-model";
import { apiClient, createOpenApiValidator } from "@whc/testing";
import { refusal, startTestGateway, type TestGateway } from "./testing/index.js";

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const endpoint = async () => (await t.a.api.endpoints.create({})).id;
const json = (v: unknown) => JSON.stringify(v);

describe("GET .../events/{eventId}/diff", () => {
  it("JSON bodies structurally, with method, sub-path, query and headers, in the documented shape", async () => {
    const ep = await endpoint();
    const [a, b] = await t.append(t.a, ep, [
      {
        path: "/hooks?page=1&keep=x",
        headers: [["Content-Type", "application/json"], ["Date", "Mon, 01 Jan 2026 00:00:00 GMT"], ["X-Old", "1"]],
        body: json({ id: "evt_1", created: 1, data: { amount: 500, items: [1, 2] }, gone: true }),
      },
      {
        method: "PUT",
        path: "/hooks/v2?page=2&keep=x",
        headers: [["content-type", "application/json"], ["Date", "Tue, 02 Jan 2026 00:00:00 GMT"], ["X-New", "2"]],
        body: json({ id: "evt_1", created: 2, data: { amount: 700, items: [1, 2, 3] }, coupon: "SPRING" }),
      },
    ]);
    const validated = apiClient(t.url, t.a.key, createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as object));
    const res = await validated.get(`/v1/endpoints/${ep}/events/${a!.id}/diff?with=${b!.id}`);
    expect(res.status).toBe(200);
    const diff = eventDiff.strict().parse(res.body);
    expect(diff.same).toBe(false);
    expect(diff.bodyKind).toBe("json");
    expect(diff.changes).toEqual([
      { op: "replace", path: "/method", from: "POST", to: "PUT" },
      { op: "replace", path: "/path", from: "/hooks", to: "/hooks/v2" },
      { op: "replace", path: "/query/page", from: "1", to: "2" },
      { op: "replace", path: "/headers/date", from: "Mon, 01 Jan 2026 00:00:00 GMT", to: "Tue, 02 Jan 2026 00:00:00 GMT" },
      { op: "remove", path: "/headers/x-old", from: "1" },
      { op: "add", path: "/headers/x-new", to: "2" },
      { op: "replace", path: "/body/created", from: 1, to: 2 },
      { op: "replace", path: "/body/data/amount", from: 500, to: 700 },
      { op: "add", path: "/body/data/items/2", to: 3 },
      { op: "remove", path: "/body/gone", from: true },
      { op: "add", path: "/body/coupon", to: "SPRING" },
    ]);

    // ignore: each path with everything under it; header names in any case.
    const ignored = await t.a.api.events.diff(ep, a!.id, { with: b!.id, ignore: "method,path,query,headers.DATE,headers.x-old,headers.x-new,body.created,body.data,body.gone,body.coupon" });
    expect(ignored).toEqual({ same: true, bodyKind: "json", changes: [], truncated: false });
    // An event against itself is the same.
    expect((await t.a.api.events.diff(ep, a!.id, { with: a!.id })).same).toBe(true);
  });

  it("text bodies by lines, binary bodies by size and SHA-256", async () => {
    const ep = await endpoint();
    const bin1 = Buffer.from([0xff, 0x00, 0x01, 0x02]);
    const bin2 = Buffer.from([0xff, 0x00, 0x01, 0x03, 0x04]);
    const [t1, t2, b1, b2] = await t.append(t.a, ep, [
      { body: "line one\nline two\nline three\n" },
      { body: "line one\nline 2\nline three\nline four\n" },
      { body: bin1 },
      { body: bin2 },
    ]);
    const text = await t.a.api.events.diff(ep, t1!.id, { with: t2!.id });
    expect(text).toMatchObject({ same: false, bodyKind: "text" });
    expect(text.changes).toEqual([
      { op: "replace", path: "/body/1", from: "line two", to: "line 2" },
      { op: "add", path: "/body/3", to: "line four" },
    ]);
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    const binary = await t.a.api.events.diff(ep, b1!.id, { with: b2!.id });
    expect(binary).toEqual({
      same: false,
      bodyKind: "binary",
      changes: [{ op: "replace", path: "/body", from: { size: 4, sha256: sha(bin1) }, to: { size: 5, sha256: sha(bin2) } }],
      truncated: false,
    });
    expect((await t.a.api.events.diff(ep, b1!.id, { with: b2!.id, ignore: "body" })).same).toBe(true);
  });

  it("`with` may be another endpoint's of the account; another account's is 404; bad input is 400", async () => {
    const [ep1, ep2] = [await endpoint(), await endpoint()];
    const [x] = await t.append(t.a, ep1, [{ body: json({ n: 1 }) }]);
    const [y] = await t.append(t.a, ep2, [{ body: json({ n: 2 }) }]);
    const across = await t.a.api.events.diff(ep1, x!.id, { with: y!.id });
    expect(across.changes).toEqual([{ op: "replace", path: "/body/n", from: 1, to: 2 }]);

    const theirs = (await t.b.api.endpoints.create({})).id;
    const [z] = await t.append(t.b, theirs, [{ body: json({ n: 3 }) }]);
    expect((await refusal(t.a.api.events.diff(ep1, x!.id, { with: z!.id }))).status).toBe(404);
    expect((await refusal(t.b.api.events.diff(theirs, z!.id, { with: x!.id }))).status).toBe(404);
    expect((await refusal(t.b.api.events.diff(ep1, x!.id, { with: x!.id }))).status).toBe(404);

    for (const query of [{ with: "nope" }, { with: y!.id, ignore: "bodies.x" }, { with: y!.id, ignore: Array(60).fill("body").join(",") }]) {
      const err = await refusal(t.a.api.events.diff(ep1, x!.id, query));
      expect([err.status, err.code]).toEqual([400, "validation_failed"]);
    }
    expect((await refusal(t.a.api.request("GET", `/v1/endpoints/${ep1}/events/${x!.id}/diff`))).status).toBe(400);
  });
});
