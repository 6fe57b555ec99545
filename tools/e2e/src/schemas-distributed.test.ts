import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { waitFor } from "@whc/testing";
import { scaleOut, startCluster, type Cluster, type Replicas } from "./cluster.js";

/**
 * Schemas and drift across the distributed services (design §19; ADR 0090): captures arrive
 * through two ingests, each sending its shapes with its encoded captures to its own catalog;
 * two catalogs learn them from one store (the embedded file, or MongoDB when the run has one),
 * so every capture is one sample, judged once, and both gateways answer the same schema and
 * the same drift.
 */

let cluster: Cluster;
let replicas: Replicas;

beforeAll(async () => {
  cluster = await startCluster();
  replicas = await scaleOut(cluster, 2);
});

afterAll(async () => {
  await cluster?.shutdown();
});

function orderPaid(i: number, edit: (o: Record<string, any>) => void = () => undefined): string {
  const order: Record<string, any> = {
    id: 820982911946154500 + i,
    email: `buyer${i}@example.com`,
    total_price: `${100 + i}.00`,
    line_items: [{ id: 466157049 + i, sku: `SKU-${i}`, quantity: 1, price: "100.00" }],
    customer: { id: 115310627314723950 + i, accepts_marketing: false },
    test: true,
  };
  edit(order);
  return JSON.stringify(order);
}

describe("schemas with two ingests and two catalogs", () => {
  it("counts each capture once and flags the same drift through either gateway", async () => {
    const ep = (await cluster.api.post("/v1/endpoints", { slug: "dist-schemas", provider: "shopify" })).body as { id: string };
    const send = async (ingest: string, body: string) => {
      const res = await fetch(`${ingest}/h/${ep.id}`, { method: "POST", headers: { "content-type": "application/json", "x-shopify-topic": "orders/paid" }, body });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    // 24 in parallel, half through each ingest: the two catalogs learn at once from one store.
    await Promise.all(Array.from({ length: 24 }, (_, i) => send(replicas.ingestUrls[i % 2]!, orderPaid(i))));
    const samples = async (gateway: number) =>
      ((await replicas.apis[gateway]!.get(`/v1/endpoints/${ep.id}/schemas`)).body.items as { eventType: string; samples: number }[]).find(
        (s) => s.eventType === "orders/paid",
      )?.samples;
    await waitFor(async () => (await samples(0)) === 24 && (await samples(1)) === 24, { what: "24 samples, each counted once", timeoutMs: 30_000 });

    const retyped = await send(replicas.ingestUrls[1]!, orderPaid(24, (o) => (o.test = "true")));
    const added = await send(replicas.ingestUrls[0]!, orderPaid(25, (o) => (o.note = null)));
    await waitFor(async () => (await samples(0)) === 26, { what: "26 samples", timeoutMs: 30_000 });

    for (const api of replicas.apis) {
      const drift = async (id: string) => (await api.get(`/v1/endpoints/${ep.id}/events/${id}`)).body.schemaDrift;
      expect(await drift(retyped)).toEqual([{ path: "test", change: "type_changed", seen: ["boolean"], now: "string" }]);
      expect(await drift(added)).toEqual([{ path: "note", change: "added", seen: [], now: "null" }]);
      const listed = (await api.get(`/v1/endpoints/${ep.id}/events?schemaDrift=true`)).body.items as { id: string }[];
      expect(listed.map((e) => e.id).sort()).toEqual([retyped, added].sort());
      const schema = (await api.get(`/v1/endpoints/${ep.id}/schemas/${encodeURIComponent("orders/paid")}`)).body as Record<string, any>;
      expect(schema.properties.line_items).toMatchObject({ type: "array", items: { type: "object" } });
      expect(schema.properties.test.type).toEqual(["string", "boolean"]);
    }
  });
});
