import { describe, it, expect, beforeAll, afterAll } from "vitest";
import Stripe from "stripe";
import { gatedDestination, waitFor, type GatedDestination } from "@whc/testing";
import { scaleOut, startCluster, type Cluster, type Replicas } from "./cluster.js";

/**
 * Deduplication across real processes (design §17, ADR 0083): the same Stripe event, signed by
 * Stripe's own SDK, sent at the same moment to two ingest processes, each appending through its
 * own catalog process (both on the one store). The catalogs decide in the append's transaction,
 * so they agree: exactly one capture is the original and is forwarded to a real local
 * destination, once; the other is stored and answered, shows duplicateOf, and its delivery is
 * `duplicate`.
 */

const ENV = {
  WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
  WHC_FORWARD_RETRY_BASE_MS: "100",
  WHC_FORWARD_POLL_MS: "100",
  // The checks read every event at each look: more than a key's default request rate.
  WHC_QUOTA_API_RPS: "5000",
};
const SECRET = "whsec_e2e_dedupe";
const ROUNDS = 8;

interface Detail {
  id: string;
  duplicateOf?: string;
  verification: string;
  forwardedResponse: { state?: string; deliveries?: { state: string; attempts: unknown[] }[] };
}

describe("deduplication across processes: two ingest processes, two catalogs", () => {
  let cluster: Cluster;
  let replicas: Replicas;
  let destination: GatedDestination;
  const stripe = new Stripe("sk_test_e2e_dedupe");

  beforeAll(async () => {
    cluster = await startCluster(ENV);
    replicas = await scaleOut(cluster, 2);
    destination = await gatedDestination();
  }, 180_000);
  afterAll(async () => {
    await destination?.close();
    await cluster?.shutdown();
  });

  async function send(ingestUrl: string, endpointId: string, payload: string): Promise<{ status: number; id: string }> {
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const res = await fetch(`${ingestUrl}/h/${endpointId}`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": signature }, body: payload });
    return { status: res.status, id: ((await res.json()) as { id: string }).id };
  }

  const detail = async (endpointId: string, eventId: string): Promise<Detail> => {
    const res = await cluster.api.get<Detail>(`/v1/endpoints/${endpointId}/events/${eventId}`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  const receivedIds = () => destination.received.map((r) => (JSON.parse(r.body.toString()) as { id: string }).id);

  it("the same Stripe event to both ingests at once: exactly one forwarded to the destination, the other duplicateOf it with its delivery duplicate", async () => {
    const created = await cluster.api.post("/v1/endpoints", {
      operatingMode: "relay",
      provider: "stripe",
      secret: SECRET,
      forward: { url: `${destination.url}/stripe`, keepPath: false },
      dedupe: { windowSeconds: 3600, key: "auto" },
    });
    expect(created.status, created.text).toBe(201);
    const ep = created.body as { id: string };
    const [ingestA, ingestB] = replicas.ingestUrls as [string, string];

    const pairs: { eventId: string; sent: { status: number; id: string }[] }[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const eventId = `evt_1E2eDedupe${String(round).padStart(4, "0")}`;
      const payload = JSON.stringify({ id: eventId, object: "event", type: "invoice.paid", created: 1795000000, data: { object: { id: `in_${round}`, amount_paid: 2000 } } });
      // Both ingests at the same moment, as a provider's retry racing its first attempt.
      const sent = await Promise.all([send(ingestA, ep.id, payload), send(ingestB, ep.id, payload)]);
      expect(sent.map((s) => s.status)).toEqual([200, 200]);
      pairs.push({ eventId, sent });
    }

    for (const { sent } of pairs) {
      const [a, b] = await Promise.all(sent.map((s) => detail(ep.id, s.id)));
      const original = a!.duplicateOf === undefined ? a! : b!;
      const duplicate = original === a ? b! : a!;
      expect(original.duplicateOf).toBeUndefined();
      expect(duplicate.duplicateOf).toBe(original.id);
      expect(duplicate.verification).toBe("verified");
      expect(duplicate.forwardedResponse.state).toBe("duplicate");
      expect(duplicate.forwardedResponse.deliveries?.map((d) => [d.state, d.attempts.length])).toEqual([["duplicate", 0]]);
      await waitFor(async () => (await detail(ep.id, original.id)).forwardedResponse.state === "delivered" || undefined, { what: "the original delivered", timeoutMs: 60_000, intervalMs: 250 });
    }

    // A later event, through the other ingest: once it is delivered, the outbox (oldest first)
    // would have sent any duplicate already. Each event reached the destination exactly once.
    const marker = await send(ingestB, ep.id, JSON.stringify({ id: "evt_1E2eDedupeMarker", object: "event", type: "invoice.paid", data: { object: {} } }));
    await waitFor(async () => (await detail(ep.id, marker.id)).forwardedResponse.state === "delivered" || undefined, { what: "the marker delivered", timeoutMs: 60_000, intervalMs: 250 });
    const counts = new Map<string, number>();
    for (const id of receivedIds()) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const { eventId } of pairs) expect(counts.get(eventId), eventId).toBe(1);
    expect(counts.get("evt_1E2eDedupeMarker")).toBe(1);
    // What reached it verifies with the sender's own SDK: forwarded byte for byte.
    for (const r of destination.received) expect(() => stripe.webhooks.constructEvent(r.body, String(r.headers["stripe-signature"]), SECRET)).not.toThrow();

    // Both gateways list the same: one duplicate per pair.
    for (const api of replicas.apis) {
      const duplicates = await api.get(`/v1/endpoints/${ep.id}/events?duplicate=true&limit=200`);
      expect(duplicates.status).toBe(200);
      expect((duplicates.body.items as { duplicateOf?: string }[]).map((e) => e.duplicateOf !== undefined)).toEqual(Array(ROUNDS).fill(true));
      const originals = await api.get(`/v1/endpoints/${ep.id}/events?duplicate=false&limit=200`);
      expect((originals.body.items as unknown[]).length).toBe(ROUNDS + 1);
    }
  }, 180_000);

  it("refuses dedupe on a proxy endpoint through the distributed gateway", async () => {
    const res = await cluster.api.post("/v1/endpoints", { operatingMode: "proxy", forward: { url: destination.url }, dedupe: { windowSeconds: 60, key: "auto" } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "validation_failed", details: { field: "dedupe", reason: "unsupported" } });
  });
});
