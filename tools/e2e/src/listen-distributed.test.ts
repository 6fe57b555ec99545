import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { buildApps, startNode, tempDir, waitFor, type RunningProcess } from "@whc/testing";
import { CLUSTER_KEY, scaleOut, startCluster, type Cluster, type Replicas } from "./cluster.js";

/**
 * `whc listen` against the distributed services (design §19): listeners are kept by the
 * catalog's store, so a listen heartbeating through one gateway is seen through the other (and
 * its catalog), and is gone there WHC_LISTENER_TTL_S after it is killed; a late Stripe event is
 * re-signed by the replay process with the endpoint's secret and verifies at the local app.
 */

const SECRET = "whsec_listen_distributed";
const stripe = new Stripe("sk_test_x");

let cluster: Cluster;
let replicas: Replicas;
let whc: string;
let state: ReturnType<typeof tempDir>;
let app: http.Server;
let appUrl: string;
const verified: { type?: string; error?: string }[] = [];
const procs: RunningProcess[] = [];

beforeAll(async () => {
  whc = buildApps("whc").whc!;
  cluster = await startCluster({ WHC_LISTENER_TTL_S: "2" });
  replicas = await scaleOut(cluster, 2);
  state = tempDir("whc-listen-dist-");
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        verified.push({ type: stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET).type });
        res.writeHead(200).end();
      } catch (err) {
        verified.push({ error: (err as Error).message });
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop("SIGKILL")));
  app?.close();
  await cluster?.shutdown();
  state?.remove();
});

interface Listener {
  id: string;
  lastSeenAt: string;
  cursor: { id: string } | null;
}

const listenersVia = async (gateway: number, endpointId: string) =>
  (await replicas.apis[gateway]!.get(`/v1/endpoints/${endpointId}/listeners`)).body.items as Listener[];

describe("whc listen against two gateways and two catalogs", () => {
  it("re-signs a late event in the replay process, and its listener is seen through the other gateway until it is killed", async () => {
    const ep = (await cluster.api.post("/v1/endpoints", { slug: "dist-listen", provider: "stripe", secret: SECRET })).body as { id: string; webhookUrl: string };
    const payload = JSON.stringify({ id: "evt_dist", object: "event", type: "invoice.late" });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 });
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "Stripe-Signature": header, "Content-Type": "application/json" }, body: payload });
    const { id } = (await res.json()) as { id: string };

    const proc = startNode(whc, { WHC_API_URL: replicas.gatewayUrls[0]!, WHC_API_KEY: CLUSTER_KEY, XDG_STATE_HOME: state.path }, [
      "listen",
      "dist-listen",
      "--forward-to",
      appUrl,
      "--since",
      id,
      "--heartbeat-interval",
      "0.2",
    ]);
    procs.push(proc);
    await proc.waitForOutput(new RegExp(`<-- 200 POST / invoice\\.late \\d+ ms \\(re-signed\\) \\[${id}\\]`));
    expect(verified).toEqual([{ type: "invoice.late" }]);

    const seen = await waitFor(async () => (await listenersVia(1, ep.id)).find((l) => l.cursor?.id === id), { what: "the listener through the second gateway" });
    await waitFor(async () => {
      const [l] = await listenersVia(1, ep.id);
      return l && Date.parse(l.lastSeenAt) > Date.parse(seen.lastSeenAt) ? true : undefined;
    }, { what: "its lastSeenAt moving" });
    expect((await listenersVia(0, ep.id)).map((l) => l.id)).toEqual([seen.id]);

    await proc.stop("SIGKILL");
    const lastSeen = Date.parse((await listenersVia(1, ep.id))[0]!.lastSeenAt);
    const gone = await waitFor(async () => ((await listenersVia(1, ep.id)).length === 0 ? Date.now() : undefined), { what: "the killed listener gone" });
    expect(gone - lastSeen).toBeGreaterThanOrEqual(2000);
    expect(await listenersVia(0, ep.id)).toEqual([]);
  });
});
