import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { replayResult, type ReplayEditsJson } from "@whc/api-model";
import { refusal, startTestGateway, type TestGateway } from "./testing/index.js";

const SECRET = "whsec_edit_and_replay";
const stripe = new Stripe("sk_test_x");

interface Verified {
  object: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  sha256: string;
}

/** A destination that verifies with the stripe package's constructEvent, as integrators do. */
async function startStripeApp() {
  const verified: Verified[] = [];
  const refused: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      try {
        const event = stripe.webhooks.constructEvent(body, String(req.headers["stripe-signature"]), SECRET);
        verified.push({ object: event.data.object as unknown as Record<string, unknown>, headers: req.headers, sha256: createHash("sha256").update(body).digest("hex") });
        res.writeHead(200).end("ok");
      } catch (err) {
        refused.push((err as Error).message);
        res.writeHead(400).end("bad signature");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, verified, refused, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let t: TestGateway;
let app: Awaited<ReturnType<typeof startStripeApp>>;
let endpointId: string;
let eventId: string;
let textEventId: string;

beforeAll(async () => {
  [t, app] = await Promise.all([startTestGateway({ replayDailyLimit: 100 }), startStripeApp()]);
  endpointId = (await t.a.api.endpoints.create({ provider: "stripe" })).id;
  const payload = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: { object: { object: "invoice", amount_paid: 500, lines: [1, 2] } } });
  // Signed long ago: only a fresh signature over the edited bytes verifies.
  const stale = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: 1_700_000_000 });
  const [event, text] = await t.append(t.a, endpointId, [
    { headers: [["Content-Type", "application/json"], ["Stripe-Signature", stale], ["X-Drop", "me"]], body: payload, provider: "stripe" },
    { headers: [["Content-Type", "text/plain"]], body: "not json", provider: "stripe" },
  ]);
  eventId = event!.id;
  textEventId = text!.id;
});
afterAll(async () => {
  await Promise.all([t.close(), app.close()]);
});

const replay = (edits: ReplayEditsJson, id = eventId) => t.a.api.events.replay(endpointId, id, { target_url: app.url, mode: "resign", target_secret: SECRET, edits });

describe("edit and replay", () => {
  it("each body edit kind is sent re-signed over the edited bytes, verified by constructEvent at the destination", async () => {
    const edited = (amount: number) => JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: { object: { object: "invoice", amount_paid: amount } } });
    const cases: [ReplayEditsJson, Record<string, unknown>][] = [
      [{ body: edited(1) }, { object: "invoice", amount_paid: 1 }],
      [{ bodyBase64: Buffer.from(edited(2)).toString("base64") }, { object: "invoice", amount_paid: 2 }],
      [{ jsonMergePatch: { data: { object: { amount_paid: 3, lines: null, coupon: "SPRING" } } } }, { object: "invoice", amount_paid: 3, coupon: "SPRING" }],
      [
        { jsonPatch: [{ op: "test", path: "/data/object/amount_paid", value: 500 }, { op: "replace", path: "/data/object/amount_paid", value: 4 }, { op: "add", path: "/data/object/lines/-", value: 3 }] },
        { object: "invoice", amount_paid: 4, lines: [1, 2, 3] },
      ],
    ];
    for (const [edits, object] of cases) {
      const res = await replay(edits);
      expect(replayResult.strict().parse(res)).toMatchObject({ result: "delivered", target_status: 200, mode: "resign", edited: true });
      const got = app.verified.at(-1)!;
      expect(got.object).toEqual(object);
      expect(res.request_sha256).toBe(got.sha256);
    }
    expect(app.refused).toEqual([]);
  });

  it("header edits set and remove; without edits the answer is not marked edited", async () => {
    const res = await replay({ headers: { set: { "X-Env": "staging" }, remove: ["x-drop"] }, jsonMergePatch: { livemode: false } });
    expect(res.edited).toBe(true);
    const got = app.verified.at(-1)!;
    expect([got.headers["x-env"], got.headers["x-drop"]]).toEqual(["staging", undefined]);
    const plain = await t.a.api.events.replay(endpointId, eventId, { target_url: app.url, mode: "resign", target_secret: SECRET });
    expect(plain.edited).toBeUndefined();
    expect(plain.request_sha256).toMatch(/^[0-9a-f]{64}$/);

    // The audit log says which parts the edited replay changed, never their values (design §19).
    const entries = (await t.a.api.audit.list({ action: "event.replayed", endpointId })).items;
    const [unedited, edited] = [entries.find((e) => e.details.audit_id === plain.audit_id), entries.find((e) => e.details.audit_id === res.audit_id)];
    expect(edited?.details).toMatchObject({ edited: { headersSet: ["x-env"], headersRemoved: ["x-drop"], body: "jsonMergePatch" } });
    expect(unedited?.details).not.toHaveProperty("edited");
    expect(JSON.stringify(edited)).not.toContain("staging");
  });

  it("refuses two body edits and a patch that does not apply (400), a patch of a body that is not JSON or a failed test (409)", async () => {
    const two = await refusal(replay({ body: "a", jsonMergePatch: {} }));
    expect([two.status, two.code]).toEqual([400, "validation_failed"]);
    const missing = await refusal(replay({ jsonPatch: [{ op: "remove", path: "/nowhere/at/all" }] }));
    expect([missing.status, missing.code]).toEqual([400, "validation_failed"]);
    const notJson = await refusal(replay({ jsonMergePatch: { a: 1 } }, textEventId));
    expect([notJson.status, notJson.code]).toEqual([409, "conflict"]);
    const failedTest = await refusal(replay({ jsonPatch: [{ op: "test", path: "/id", value: "evt_other" }] }));
    expect([failedTest.status, failedTest.code]).toEqual([409, "conflict"]);
    const badHeader = await refusal(replay({ headers: { set: { "X-Bad": "a\r\nb" } } }));
    expect([badHeader.status, badHeader.code]).toEqual([400, "validation_failed"]);
  });
});
