import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.shutdown();
});

describe("trigger in distributed mode (the gateway reaches ingest at WHC_INGEST_PUBLIC_URL)", () => {
  it("captures a Stripe invoice.paid signed with the endpoint's secret as verified, the set field in the stored body", async () => {
    const ep = (await cluster.api.post("/v1/endpoints", { provider: "stripe", secret: "whsec_trigger_distributed" })).body as { id: string };
    const res = await cluster.api.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", set: { "data.object.amount_paid": 500 } });
    expect(res.status).toBe(200);
    const event = (await cluster.api.get(`/v1/endpoints/${ep.id}/events/${res.body.eventId}`)).body as Record<string, any>;
    expect([event.provider, event.canonicalEventType, event.verification]).toEqual(["stripe", "invoice.paid", "verified"]);
    expect(JSON.parse(event.body).data.object.amount_paid).toBe(500);
  });

  it("refuses an unknown event type with validation_failed on eventType, listing the known ones", async () => {
    const ep = (await cluster.api.post("/v1/endpoints", { provider: "stripe", secret: "whsec_x" })).body as { id: string };
    const res = await cluster.api.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.teleported" });
    expect([res.status, res.body.error, res.body.details.field]).toEqual([400, "validation_failed", "eventType"]);
    expect(res.body.details.allowed).toContain("invoice.paid");
  });
});
