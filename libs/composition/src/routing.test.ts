import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHash } from "node:crypto";
import http from "node:http";
import Stripe from "stripe";
import { TABLE_CAPTURES, TABLE_FILTERS, type TableCapture } from "@whc/routing/testing";
import { gatedDestination, waitFor, type GatedDestination } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * Routing in the all-in-one process (design §17): captures over HTTP into ingest, which picks
 * the destinations whose filters they match; the outbox worker in the same process sends each
 * delivery, through the destination's transform when it has one, re-signed with its target
 * secret. The distributed services run the same table and fan-out (tools/e2e routing.test.ts).
 */

let t: TestSystem;
const sinks: GatedDestination[] = [];
beforeAll(async () => {
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_RETRY_BASE_MS: "50", WHC_FORWARD_POLL_MS: "50" });
});
afterAll(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await t?.stop();
});

async function sink(): Promise<GatedDestination> {
  const s = await gatedDestination();
  sinks.push(s);
  return s;
}

interface Delivery {
  destinationId: string;
  name: string;
  state: string;
  attempts: { n: number; error: string | null; message?: string; requestSha256: string | null }[];
}
interface Forwarded {
  state?: string;
  deliveries?: Delivery[];
}

/** Sends a table capture as a sender would: repeated headers as separate lines, the body's bytes as they are. */
function sendCapture(webhookUrl: string, c: TableCapture): Promise<{ status: number; id: string }> {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of c.headers) (headers[name] ??= []).push(value);
  return new Promise((resolve, reject) => {
    const req = http.request(`${webhookUrl}${c.rest}`, { method: c.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (b: Buffer) => chunks.push(b));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, id: (JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id }));
    });
    req.on("error", reject);
    req.end(c.body.length > 0 ? c.body : undefined);
  });
}

async function forwardedOf(endpointId: string, eventId: string): Promise<Forwarded> {
  const res = await t.a.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body.forwardedResponse as Forwarded;
}

describe("the filter operator table, through ingest", () => {
  it("starts a delivery to exactly the destinations whose filters each capture matches", async () => {
    const target = await sink();
    const matched = new Map<string, string[]>();
    for (let at = 0; at < TABLE_FILTERS.length; at += 10) {
      const rows = TABLE_FILTERS.slice(at, at + 10);
      const created = await t.a.post("/v1/endpoints", {
        operatingMode: "relay",
        destinations: rows.map((row, i) => ({ name: `filter-${at + i}`, url: target.url, ...(row.filter ? { filter: row.filter } : {}) })),
      });
      expect(created.status, created.text).toBe(201);
      const ep = created.body as { id: string; webhookUrl: string; destinations: { id: string; name: string }[] };
      const nameOf = new Map(ep.destinations.map((d) => [d.id, d.name]));
      for (const capture of TABLE_CAPTURES) {
        const sent = await sendCapture(ep.webhookUrl, capture);
        expect(sent.status).toBe(200);
        const deliveries = (await forwardedOf(ep.id, sent.id)).deliveries ?? [];
        for (const d of deliveries) {
          const name = nameOf.get(d.destinationId)!;
          matched.set(name, [...(matched.get(name) ?? []), capture.id]);
        }
      }
    }
    for (const [i, row] of TABLE_FILTERS.entries()) expect({ filter: row.name, matches: matched.get(`filter-${i}`) ?? [] }).toEqual({ filter: row.name, matches: row.matches });
  }, 60_000);
});

describe("fan-out to several destinations", () => {
  it("delivers each capture once to each destination it matched: exact bytes untransformed, transformed and re-signed, skipped, failed", async () => {
    const stripe = new Stripe("sk_test_routing");
    const [billing, audit, quiet] = [await sink(), await sink(), await sink()];
    const created = await t.a.post("/v1/endpoints", {
      operatingMode: "relay",
      provider: "stripe",
      secret: "whsec_source",
      destinations: [
        { name: "billing", url: `${billing.url}/billing`, filter: { eventType: "invoice.paid" } },
        {
          name: "audit",
          url: `${audit.url}/audit`,
          targetSecret: "whsec_audit",
          transform: "function transform(req) { req.headers['x-env'] = ['prod']; req.body.audited = true; return req; }",
        },
        { name: "quiet", url: `${quiet.url}/quiet`, transform: "function transform(req) { if (req.body.type === 'invoice.failed') return null; throw new Error('not for me: ' + req.body.type); }" },
      ],
    });
    expect(created.status, created.text).toBe(201);
    const ep = created.body as { id: string; webhookUrl: string; destinations: { id: string; name: string }[] };
    const idOf = Object.fromEntries(ep.destinations.map((d) => [d.name, d.id]));

    const payloads = new Map<string, string>();
    const types = ["invoice.paid", "invoice.failed", "invoice.paid", "invoice.failed", "invoice.paid"];
    for (const [i, type] of types.entries()) {
      // Pretty-printed: the exact bytes matter to the untransformed destination's signature.
      const payload = JSON.stringify({ id: `evt_${i}`, object: "event", type, data: { object: { amount: 100 * i } } }, null, 2);
      const res = await fetch(ep.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_source" }) },
        body: payload,
      });
      expect(res.status).toBe(200);
      payloads.set(((await res.json()) as { id: string }).id, payload);
    }
    const ids = [...payloads.keys()];
    const paid = ids.filter((_, i) => types[i] === "invoice.paid");
    const failed = ids.filter((_, i) => types[i] === "invoice.failed");

    const settled = await waitFor(
      async () => {
        const all = await Promise.all(ids.map(async (id) => [id, await forwardedOf(ep.id, id)] as const));
        return all.every(([, f]) => f.state !== "pending") ? new Map(all) : undefined;
      },
      { what: "every delivery settled", timeoutMs: 30_000 },
    );
    const byName = (id: string) => new Map((settled.get(id)!.deliveries ?? []).map((d) => [d.name, d]));
    for (const id of paid) {
      expect([...byName(id).entries()].map(([n, d]) => [n, d.state])).toEqual([
        ["billing", "delivered"],
        ["audit", "delivered"],
        ["quiet", "failed"],
      ]);
      expect(byName(id).get("quiet")!.attempts).toMatchObject([{ n: 1, error: "transform_failed", requestSha256: null }]);
      expect(byName(id).get("quiet")!.attempts[0]!.message).toContain("not for me: invoice.paid");
      expect(settled.get(id)!.state).toBe("failed");
    }
    for (const id of failed) {
      expect([...byName(id).entries()].map(([n, d]) => [n, d.state])).toEqual([
        ["audit", "delivered"],
        ["quiet", "skipped"],
      ]);
      expect(settled.get(id)!.state).toBe("delivered");
    }
    // Each destination got exactly its events, once each.
    const once = (s: GatedDestination) => s.accepted.map((r) => r.deliveryId).sort();
    expect(once(billing)).toEqual([...paid].sort());
    expect(once(audit)).toEqual([...ids].sort());
    expect(quiet.received).toEqual([]);
    // Untransformed: the captured bytes exactly, the sender's own signature still good.
    for (const r of billing.accepted) {
      expect(r.body.toString("utf8")).toBe(payloads.get(r.deliveryId));
      expect(stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), "whsec_source").id).toBe(JSON.parse(payloads.get(r.deliveryId)!).id);
    }
    // Transformed: the transform's request, re-signed with the destination's secret, its digest recorded.
    for (const r of audit.accepted) {
      const event = stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), "whsec_audit") as unknown as { id: string; audited: boolean };
      expect([event.id, event.audited, r.headers["x-env"]]).toEqual([JSON.parse(payloads.get(r.deliveryId)!).id, true, "prod"]);
      const attempt = byName(r.deliveryId).get("audit")!.attempts.at(-1)!;
      expect(attempt.requestSha256).toBe(createHash("sha256").update(r.body).digest("hex"));
      expect(() => stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), "whsec_source")).toThrow();
    }
    // The list filters by destination and by the aggregate.
    const listed = async (q: string) => ((await t.a.get(`/v1/endpoints/${ep.id}/events?${q}`)).body.items as { id: string }[]).map((e) => e.id).sort();
    expect(await listed(`destinationId=${idOf.billing}`)).toEqual([...paid].sort());
    expect(await listed("forwardState=failed")).toEqual([...paid].sort());
  }, 60_000);
});
