import { describe, it, expect, beforeAll, afterAll } from "vitest";
import Stripe from "stripe";
import { rmSync } from "node:fs";
import path from "node:path";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/*
 * Schemas and drift (design §19) over the all-in-one process and real HTTP: captures sent to
 * an endpoint's webhook URL, signed by Stripe's own library, are learned by the catalog after
 * they were answered; drifted ones are flagged on their detail and in the list filter, and the
 * drift hook (where alert channels plug in) is told once per type per hour. Every answer is
 * checked against the served OpenAPI document.
 */

const SECRET = "whsec_schemas";
const stripe = new Stripe("sk_test_x");
const logLines: Record<string, unknown>[] = [];

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({}, createLogger("all-in-one", "info", { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) }));
});
afterAll(async () => {
  await t.stop();
});

function chargeSucceeded(i: number, edit: (e: Record<string, any>) => void = () => undefined): string {
  const event: Record<string, any> = {
    id: `evt_3P${String(i).padStart(10, "0")}`,
    object: "event",
    type: "charge.succeeded",
    created: 1_700_000_000 + i,
    data: { object: { id: `ch_${i}`, amount: 1000 + i, currency: "eur", captured: true, billing_details: { email: `p${i}@example.com`, name: null } } },
  };
  edit(event);
  return JSON.stringify(event);
}

async function send(url: string, payload: string): Promise<string> {
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  const res = await fetch(url, { method: "POST", headers: { "Stripe-Signature": header, "Content-Type": "application/json" }, body: payload });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

const samplesOf = async (endpointId: string, eventType = "charge.succeeded") =>
  ((await t.a.get(`/v1/endpoints/${endpointId}/schemas`)).body.items as { eventType: string; samples: number }[]).find((s) => s.eventType === eventType)?.samples ?? 0;

describe("schemas and drift through ingest (design §19)", () => {
  it("learns 25 captures, then flags an added, a missing and a retyped field; the hook hears of it once", async () => {
    const ep = (await t.a.post("/v1/endpoints", { provider: "stripe", secret: SECRET })).body as { id: string; webhookUrl: string };
    for (let i = 0; i < 25; i += 1) await send(ep.webhookUrl, chargeSucceeded(i));
    await waitFor(async () => (await samplesOf(ep.id)) === 25, { what: "25 samples learned" });

    const added = await send(ep.webhookUrl, chargeSucceeded(25, (e) => (e.data.object.outcome = { risk_level: "normal" })));
    const missing = await send(ep.webhookUrl, chargeSucceeded(26, (e) => delete e.data.object.captured));
    const retyped = await send(ep.webhookUrl, chargeSucceeded(27, (e) => (e.data.object.amount = 10.5)));
    await waitFor(async () => (await samplesOf(ep.id)) === 28, { what: "28 samples learned" });

    const drift = async (id: string) => (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body.schemaDrift;
    expect(await drift(added)).toEqual([{ path: "data.object.outcome", change: "added", seen: [], now: "object" }]);
    expect(await drift(missing)).toEqual([{ path: "data.object.captured", change: "missing", seen: ["boolean"], now: "absent" }]);
    expect(await drift(retyped)).toEqual([{ path: "data.object.amount", change: "type_changed", seen: ["integer"], now: "number" }]);
    const listed = (await t.a.get(`/v1/endpoints/${ep.id}/events?schemaDrift=true`)).body.items as { id: string; verification: string }[];
    expect(listed.map((e) => e.id)).toEqual([retyped, missing, added]);
    // Learning changed nothing else: the signatures verified as they came.
    expect(listed.every((e) => e.verification === "verified")).toBe(true);

    // The hook (alert channels plug in there): one notice for the type within the hour.
    const notices = logLines.filter((l) => l.msg === "schema drift" && l.endpointId === ep.id);
    expect(notices).toEqual([expect.objectContaining({ eventType: "charge.succeeded", eventId: added, count: 1 })]);

    // No value was learned: the customer's address and the charge ids are nowhere in the schemas.
    const schemas = JSON.stringify((await t.a.get(`/v1/endpoints/${ep.id}/schemas`)).body);
    expect(schemas).toContain("data.object.billing_details.email");
    for (const value of ["p1@example.com", "ch_1", "evt_3P", "eur"]) expect(schemas).not.toContain(value);
  });

  it("learns nothing of a metadata-only endpoint's bodies, nor of bodies that are not a JSON object", async () => {
    const quiet = (await t.a.post("/v1/endpoints", { operatingMode: "metadata_only" })).body as { id: string; webhookUrl: string };
    const plain = (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    await fetch(quiet.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    await fetch(plain.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "[1,2]" });
    await fetch(plain.webhookUrl, { method: "POST", headers: { "content-type": "text/plain" }, body: "a=1&b=2" });
    await fetch(plain.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"learned":true}' });
    await waitFor(async () => (await samplesOf(plain.id, "*")) === 1, { what: "the JSON object learned" });
    expect((await t.a.get(`/v1/endpoints/${quiet.id}/schemas`)).body.items).toEqual([]);
    expect((await t.a.get(`/v1/endpoints/${plain.id}/schemas`)).body.items).toHaveLength(1);
  });
});

describe("WHC_SCHEMA_LEARNING=false", () => {
  it("reads no shape, so nothing is learned", async () => {
    const off = await startTestSystem({ WHC_SCHEMA_LEARNING: "false" });
    const ep = (await off.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    for (let i = 0; i < 3; i += 1) await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    // Closing learns whatever waits: then the store holds all that was ever learned.
    await off.system.close();
    const store = openSqliteStore({ file: path.join(off.dataDir, "catalog.db") });
    try {
      const endpoint = await store.getEndpoint(ep.id);
      expect(endpoint?.eventCount).toBe(3);
      expect(await store.listSchemas(endpoint!.accountId, ep.id)).toEqual([]);
    } finally {
      await store.close();
      rmSync(off.dataDir, { recursive: true, force: true });
    }
  });
});
