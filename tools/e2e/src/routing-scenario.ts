import http from "node:http";
import { expect } from "vitest";
import Stripe from "stripe";
import { TABLE_CAPTURES, TABLE_FILTERS, type TableCapture } from "@whc/routing/testing";
import { gatedDestination, waitFor, type ApiClient, type GatedDestination } from "@whc/testing";

/**
 * Routing's scenarios against real processes (design §17), shared by the distributed cluster
 * and the all-in-one process (routing.test.ts): the filter operator table through ingest, and a
 * fan-out held in flight at two destinations while a test kills the sender.
 */

/** Sends a table capture as a sender would: repeated headers as separate lines, the body's bytes as they are. */
export function sendCapture(webhookUrl: string, c: TableCapture): Promise<{ status: number; id: string }> {
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

interface Forwarded {
  state?: string;
  deliveries?: { destinationId: string; name: string; state: string; attempts: { n: number; requestSha256: string | null }[] }[];
}

async function forwardedOf(api: ApiClient, endpointId: string, eventId: string): Promise<Forwarded> {
  const res = await api.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body.forwardedResponse as Forwarded;
}

/** Every filter of the table on a relay endpoint's destinations (ten at a time); each table capture sent: which destinations each matched. */
export async function runFilterTable(api: ApiClient, sinkUrl: string): Promise<void> {
  const matched = new Map<string, string[]>();
  for (let at = 0; at < TABLE_FILTERS.length; at += 10) {
    const rows = TABLE_FILTERS.slice(at, at + 10);
    const created = await api.post("/v1/endpoints", {
      operatingMode: "relay",
      destinations: rows.map((row, i) => ({ name: `filter-${at + i}`, url: sinkUrl, ...(row.filter ? { filter: row.filter } : {}) })),
    });
    expect(created.status, created.text).toBe(201);
    const ep = created.body as { id: string; webhookUrl: string; destinations: { id: string; name: string }[] };
    const nameOf = new Map(ep.destinations.map((d) => [d.id, d.name]));
    for (const capture of TABLE_CAPTURES) {
      const sent = await sendCapture(ep.webhookUrl, capture);
      expect(sent.status).toBe(200);
      for (const d of (await forwardedOf(api, ep.id, sent.id)).deliveries ?? []) {
        const name = nameOf.get(d.destinationId)!;
        matched.set(name, [...(matched.get(name) ?? []), capture.id]);
      }
    }
  }
  for (const [i, row] of TABLE_FILTERS.entries()) {
    expect({ filter: row.name, matches: matched.get(`filter-${i}`) ?? [] }).toEqual({ filter: row.name, matches: row.matches });
  }
}

export interface FanOut {
  endpointId: string;
  billing: GatedDestination;
  audit: GatedDestination;
  /** Every capture's event id and the exact payload sent; which of them are invoice.paid. */
  payloads: Map<string, string>;
  paid: string[];
  close(): Promise<void>;
}

const stripe = new Stripe("sk_test_routing_e2e");
export const SOURCE_SECRET = "whsec_routing_source";
export const AUDIT_SECRET = "whsec_routing_audit";

/**
 * A Stripe relay endpoint with two destinations: `billing` takes invoice.paid only and gets
 * the captures as they came; `audit` takes every capture through a transform (a header added,
 * a field set) re-signed with its own secret. Both hold every request (gated) until `open()`.
 * `count` captures, paid and failed in turn.
 */
export async function startFanOut(api: ApiClient, count: number): Promise<FanOut> {
  const [billing, audit] = [await gatedDestination({ gated: true }), await gatedDestination({ gated: true })];
  const created = await api.post("/v1/endpoints", {
    operatingMode: "relay",
    provider: "stripe",
    secret: SOURCE_SECRET,
    // The gates hold requests until their attempts time out and are sent again (one process
    // sends 32 at once): their breakers (design §18) would open on those timeouts and hold the
    // rest, which these tests are not about, so their thresholds are above them.
    destinations: [
      { name: "billing", url: `${billing.url}/billing`, filter: { eventType: "invoice.paid" }, breaker: { failures: 100 } },
      {
        name: "audit",
        url: `${audit.url}/audit`,
        breaker: { failures: 100 },
        targetSecret: AUDIT_SECRET,
        transform: "function transform(req) { req.headers['x-env'] = ['prod']; req.body.audited = true; return req; }",
      },
    ],
  });
  expect(created.status, created.text).toBe(201);
  const ep = created.body as { id: string; webhookUrl: string };
  const payloads = new Map<string, string>();
  const paid: string[] = [];
  for (let i = 0; i < count; i++) {
    const type = i % 2 === 0 ? "invoice.paid" : "invoice.failed";
    const payload = JSON.stringify({ id: `evt_fan_${i}`, object: "event", type, data: { object: { amount: 100 + i } } }, null, 2);
    const res = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret: SOURCE_SECRET }) },
      body: payload,
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    payloads.set(id, payload);
    if (type === "invoice.paid") paid.push(id);
  }
  return {
    endpointId: ep.id,
    billing,
    audit,
    payloads,
    paid,
    close: async () => {
      await billing.close();
      await audit.close();
    },
  };
}

/**
 * After the senders settled: every delivery delivered; each destination accepted exactly its
 * events, once each, whatever was abandoned when a sender died; no (delivery, attempt) pair
 * sent twice; untransformed bytes exact with the sender's signature good, transformed ones
 * re-signed (the stripe package verifies both) with their digest recorded.
 */
export async function expectDeliveredOnce(api: ApiClient, f: FanOut): Promise<void> {
  const ids = [...f.payloads.keys()];
  const settled = await waitFor(
    async () => {
      const all = await Promise.all(ids.map(async (id) => [id, await forwardedOf(api, f.endpointId, id)] as const));
      return all.every(([, fr]) => fr.state === "delivered") ? new Map(all) : undefined;
    },
    // One request per event at each look: a quarter second apart, within any key's request rate.
    { what: "every delivery delivered", timeoutMs: 60_000, intervalMs: 250 },
  );
  const sorted = (xs: string[]) => [...xs].sort();
  expect(sorted(f.billing.accepted.map((r) => r.deliveryId))).toEqual(sorted(f.paid));
  expect(sorted(f.audit.accepted.map((r) => r.deliveryId))).toEqual(sorted(ids));
  for (const d of [f.billing, f.audit]) {
    const sent = d.received.map((r) => `${r.deliveryId}#${r.attempt}`);
    expect(new Set(sent).size).toBe(sent.length);
    // An attempt abandoned by a dead sender was made again under a later number.
    for (const lost of d.abandoned) {
      const made = d.accepted.find((r) => r.deliveryId === lost.deliveryId)!;
      expect(Number(made.attempt)).toBeGreaterThan(Number(lost.attempt));
    }
  }
  for (const r of f.billing.accepted) {
    expect(r.body.toString("utf8")).toBe(f.payloads.get(r.deliveryId));
    expect(stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), SOURCE_SECRET).id).toBe(JSON.parse(f.payloads.get(r.deliveryId)!).id);
  }
  for (const r of f.audit.accepted) {
    const event = stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), AUDIT_SECRET) as unknown as { id: string; audited: boolean };
    expect([event.id, event.audited, r.headers["x-env"]]).toEqual([JSON.parse(f.payloads.get(r.deliveryId)!).id, true, "prod"]);
  }
  for (const id of ids) {
    const names = (settled.get(id)!.deliveries ?? []).map((d) => [d.name, d.state]);
    expect(names).toEqual(f.paid.includes(id) ? [["billing", "delivered"], ["audit", "delivered"]] : [["audit", "delivered"]]);
  }
}
