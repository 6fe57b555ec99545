import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { waitFor } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";

/**
 * Alert channels across real processes (design §18; ADR 0085): the catalog process raises and
 * keeps the alert outbox, the replay process sends, and a real local HTTP server receives.
 * Retry delays and the coalescing window are shortened by configuration, never slept through.
 */

interface Received {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server answering `status` and keeping every request. */
async function server(status: number) {
  const received: Received[] = [];
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))),
  };
}

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "100",
    WHC_FORWARD_POLL_MS: "100",
    WHC_FORWARD_CLAIM_MS: "2000",
    WHC_ALERT_COALESCE_S: "5",
  });
}, 120_000);
afterAll(async () => {
  await cluster?.shutdown();
});

describe("alert channels across processes", () => {
  it("sends a real local server a delivery.exhausted alert that verifies with standardwebhooks, counts it in the replay process's metrics, and coalesces the next two", async () => {
    const down = await server(503);
    const receiver = await server(204);
    // Six failures in a row would open the destination's breaker (design §18) and hold the last
    // deliveries instead of giving them up: its threshold is set above what this test sends.
    const ep = (await cluster.api.post("/v1/endpoints", { slug: "alerted", operatingMode: "relay", forward: { url: down.url, maxAttempts: 2, breaker: { failures: 20 } } })).body as {
      id: string;
      webhookUrl: string;
    };
    const channel = await cluster.api.post("/v1/alert-channels", { name: "ops", type: "webhook", url: `${receiver.url}/alerts`, events: ["delivery.exhausted"] });
    expect(channel.status).toBe(201);
    const secret = channel.body.secret as string;

    const sent = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"type":"invoice.paid"}' });
    const { id: eventId } = (await sent.json()) as { id: string };
    await waitFor(() => receiver.received.length >= 1 || undefined, { what: "the alert", timeoutMs: 30_000 });

    const got = receiver.received[0]!;
    expect(got.url).toBe("/alerts");
    const message = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(message).toMatchObject({ type: "delivery.exhausted", data: { eventId, attempts: 2, status: 503, endpointId: ep.id, endpointSlug: "alerted", count: 1 } });
    expect(down.received).toHaveLength(2);
    await waitFor(
      async () => {
        const items = (await cluster.api.get("/v1/alert-channels")).body.items as { lastDelivery: { state: string } | null }[];
        return items[0]?.lastDelivery?.state === "delivered" || undefined;
      },
      { what: "the delivery recorded" },
    );
    const metrics = await (await fetch(`${cluster.metricsUrls.replay}/metrics`)).text();
    expect(metrics).toMatch(/^whc_alerts_total\{type="delivery.exhausted",state="delivered"\} 1$/m);

    // Two more given up within the first alert's window: one alert when it ends, count 2.
    const more: string[] = [];
    for (const n of [2, 3]) more.push(((await (await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${n}}` })).json()) as { id: string }).id);
    await waitFor(() => receiver.received.length >= 2 || undefined, { what: "the coalesced alert", timeoutMs: 30_000 });
    const second = receiver.received[1]!;
    const coalesced = new Webhook(secret).verify(second.body, second.headers as Record<string, string>) as { data: Record<string, unknown> };
    // The last occurrence's event: the two deliveries are given up concurrently, in either order.
    expect(coalesced.data).toMatchObject({ count: 2, endpointSlug: "alerted" });
    expect(more).toContain(coalesced.data.eventId);
    expect(second.headers["webhook-id"]).not.toBe(got.headers["webhook-id"]);
    expect(receiver.received).toHaveLength(2);
    await down.close();
    await receiver.close();
  }, 90_000);

  it("sends a Slack channel its text when tested, through the replay process", async () => {
    const slack = await server(200);
    const channel = (await cluster.api.post("/v1/alert-channels", { name: "ops-slack", type: "slack", url: `${slack.url}/services/T/B/x`, events: ["signature.failed"] })).body as {
      id: string;
    };
    const test = await cluster.api.post(`/v1/alert-channels/${channel.id}/test`);
    expect(test.status).toBe(202);
    await waitFor(() => slack.received.length >= 1 || undefined, { what: "the test alert", timeoutMs: 20_000 });
    expect(JSON.parse(slack.received[0]!.body)).toEqual({ text: "Webhook Capture: test: A test alert for channel ops-slack." });
    await slack.close();
  }, 30_000);
});
