import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Stripe from "stripe";
import { createApiClient, type ApiClient, type EndpointJson, type ForwardedResponseJson } from "@whc/api-model";
import { buildApps, freePort, startNode, tempDir, waitFor, type RunningProcess } from "@whc/testing";

/**
 * `whc listen --forward-to` (design §11) against the all-in-one process and a local app:
 * the built CLI runs as a child process, as a developer runs it.
 */

const KEY = `whc_${"L".repeat(20)}${"7".repeat(20)}`;
const STRIPE_SECRET = "whsec_listen_e2e_secret";
const stripe = new Stripe("sk_test_x");

let mains: Record<string, string>;
let server: RunningProcess;
let serverEnv: Record<string, string>;
let data: ReturnType<typeof tempDir>;
let state: ReturnType<typeof tempDir>;
let gatewayUrl: string;
let api: ApiClient;
let app: http.Server;
let appUrl: string;
const listeners: RunningProcess[] = [];

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The Stripe event type when the request carried a signature Stripe's library accepts. */
  verifiedType?: string;
  verifyError?: string;
}
const received: Received[] = [];

/** The local app: verifies a Stripe signature as a Stripe integration does, and answers. */
function localApp(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const got: Received = { method: req.method!, url: req.url!, headers: req.headers, body };
    const signature = req.headers["stripe-signature"];
    if (typeof signature === "string") {
      try {
        got.verifiedType = stripe.webhooks.constructEvent(body, signature, STRIPE_SECRET).type;
      } catch (err) {
        got.verifyError = (err as Error).message;
      }
    }
    received.push(got);
    const ok = got.verifyError === undefined;
    res.writeHead(ok ? 200 : 400, { "content-type": "application/json", "x-local-app": "yes" }).end(JSON.stringify({ received: ok }));
  });
}

function listen(...args: string[]): RunningProcess {
  const proc = startNode(mains.whc!, { WHC_API_URL: gatewayUrl, WHC_API_KEY: KEY, XDG_STATE_HOME: state.path }, ["listen", ...args]);
  listeners.push(proc);
  return proc;
}

async function startServer(): Promise<void> {
  server = startNode(mains["all-in-one"]!, serverEnv);
  await server.waitForOutput(/webhook-capture ready/);
}

/** A Stripe capture of `type`, signed by Stripe's own library; its event id. */
async function stripeCapture(url: string, type: string): Promise<string> {
  const payload = JSON.stringify({ id: `evt_${type}`, object: "event", type, data: { object: { amount: 4200 } } }, null, 1);
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
  const res = await fetch(url, { method: "POST", headers: { "Stripe-Signature": header, "Content-Type": "application/json" }, body: payload });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function capture(url: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { method: "POST", headers, body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

const deliveryId = (r: Received) => r.headers["x-whc-delivery-id"];
const deliveriesOf = (ids: string[]) => received.filter((r) => ids.includes(String(deliveryId(r))));

async function delivery(endpointId: string, eventId: string): Promise<ForwardedResponseJson> {
  return (await api.events.get(endpointId, eventId)).forwardedResponse as ForwardedResponseJson;
}

function cursorFileOf(endpointId: string): string | undefined {
  const dir = path.join(state.path, "whc");
  try {
    const name = readdirSync(dir).find((f) => f.startsWith(`listen-${endpointId}-`) && f.endsWith(".json"));
    return name && path.join(dir, name);
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  mains = buildApps("all-in-one", "whc");
  data = tempDir("whc-listen-");
  state = tempDir("whc-listen-state-");
  const [gw, ing] = [await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gw}`;
  serverEnv = {
    WHC_DATA_DIR: data.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ing}`,
    WHC_BOOTSTRAP_API_KEYS: `listeners:${KEY}`,
  };
  await startServer();
  api = createApiClient({ baseUrl: gatewayUrl, apiKey: KEY });
  app = http.createServer(localApp);
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(listeners.map((l) => l.stop("SIGKILL")));
  app?.close();
  await server?.stop();
  data?.remove();
  state?.remove();
});

describe("whc listen --forward-to", () => {
  let ep: EndpointJson;

  it("delivers a Stripe-signed capture that the app verifies, with its sub-path and query, and records the answer", async () => {
    ep = await api.endpoints.create({ slug: "listen-stripe", provider: "stripe", secret: STRIPE_SECRET });
    const proc = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`);
    await proc.waitForOutput(/forwarding listen-stripe to .*new captures/);

    const id = await stripeCapture(`${ep.webhookUrl}/stripe/events?x=1`, "invoice.paid");
    const line = await proc.waitForOutput(/<-- 200 POST \/webhooks\/stripe\/events\?x=1 invoice\.paid \d+ ms\n/);
    expect(line).toBeTruthy();
    const [got] = deliveriesOf([id]);
    expect(got).toMatchObject({ method: "POST", url: "/webhooks/stripe/events?x=1", verifiedType: "invoice.paid" });
    expect(got!.verifyError).toBeUndefined();
    expect(got!.headers["x-whc-attempt"]).toBe("1");
    expect(got!.headers["content-type"]).toBe("application/json");

    const fr = await delivery(ep.id, id);
    expect(fr.state).toBe("delivered");
    expect(fr.attempts).toHaveLength(1);
    expect(fr.attempts[0]).toMatchObject({
      n: 1,
      trigger: "cli",
      url: `${appUrl}/webhooks/stripe/events?x=1`,
      status: 200,
      error: null,
      bodyTruncated: false,
    });
    expect(Buffer.from(fr.attempts[0]!.bodyBase64, "base64").toString()).toBe('{"received":true}');
    expect(fr.attempts[0]!.headers["x-local-app"] ?? fr.attempts[0]!.headers["X-Local-App"]).toEqual(["yes"]);
  });

  it("delivers a binary body with NUL and invalid UTF-8 byte for byte, to the sub-path and query the detail shows", async () => {
    const proc = listeners.at(-1)!;
    const bytes = Uint8Array.from([0x00, 0x01, 0xff, 0xfe, 0xc3, 0x28, 0x7b, 0x00, 0x80, 0x0a]);
    const id = await capture(`${ep.webhookUrl}/a/b?x=1&y=%20`, bytes, { "Content-Type": "application/octet-stream" });
    await proc.waitForOutput(/<-- 200 POST \/webhooks\/a\/b\?x=1&y=%20 /);
    expect((await api.events.get(ep.id, id)).path).toBe("/a/b?x=1&y=%20");
    const [got] = deliveriesOf([id]);
    expect(got!.url).toBe("/webhooks/a/b?x=1&y=%20");
    expect(got!.body).toEqual(Buffer.from(bytes));
    expect(got!.headers["content-type"]).toBe("application/octet-stream");
    expect(await proc.stop("SIGINT")).toBe(0);
  });

  it("stopped, three captures taken, restarted: the three in order, once each, then a new one live", async () => {
    const first = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`);
    await first.waitForOutput(/every capture after/);
    expect(await first.stop("SIGINT")).toBe(0);

    const missed = [];
    for (const type of ["missed.one", "missed.two", "missed.three"]) missed.push(await stripeCapture(ep.webhookUrl, type));
    const again = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`);
    await again.waitForOutput(/missed\.three \d+ ms\n/);
    const live = await stripeCapture(`${ep.webhookUrl}/live`, "live.one");
    await again.waitForOutput(/live\.one \d+ ms\n/);

    const lines = again.output().split("\n").filter((l) => l.startsWith("<-- "));
    expect(lines.map((l) => l.split(" ")[4])).toEqual(["missed.one", "missed.two", "missed.three", "live.one"]);
    const got = deliveriesOf([...missed, live]);
    expect(got.map((r) => r.verifiedType)).toEqual(["missed.one", "missed.two", "missed.three", "live.one"]);
    expect(got.map(deliveryId)).toEqual([...missed, live]);
    expect(await again.stop("SIGINT")).toBe(0);
    // Each once: one attempt each, all by the CLI.
    for (const id of [...missed, live]) expect((await delivery(ep.id, id)).attempts.map((a) => a.trigger)).toEqual(["cli"]);
  });

  it("--from-now skips what arrived while it was away", async () => {
    const skipped = await stripeCapture(ep.webhookUrl, "while.away");
    const proc = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`, "--from-now");
    await proc.waitForOutput(/new captures, then live/);
    const live = await stripeCapture(ep.webhookUrl, "after.from.now");
    await proc.waitForOutput(/after\.from\.now \d+ ms\n/);
    expect(proc.output()).not.toContain("while.away");
    expect(deliveriesOf([skipped])).toEqual([]);
    expect(deliveriesOf([live])).toHaveLength(1);
    expect(await proc.stop("SIGTERM")).toBe(0);
  });

  it("--json: one object per delivery; --events: only those types, the cursor moving past the others", async () => {
    const other = await api.endpoints.create({ slug: "listen-json" });
    const proc = listen(other.id, "--forward-to", `${appUrl}/json`, "--json", "--events", "wanted.type,also.wanted");
    await waitFor(() => cursorFileOf(other.id), { what: "the cursor file" });
    const skipped = await capture(other.webhookUrl, JSON.stringify({ type: "unwanted.type" }), { "Content-Type": "application/json" });
    const wanted = await capture(`${other.webhookUrl}/x?y=z`, JSON.stringify({ type: "wanted.type" }), { "Content-Type": "application/json" });
    await proc.waitForOutput(/\{"eventId".*\}\n/);
    const line = JSON.parse(proc.output().trim().split("\n")[0]!) as Record<string, unknown>;
    expect(line).toEqual({
      eventId: wanted,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      eventType: "wanted.type",
      method: "POST",
      url: `${appUrl}/json/x?y=z`,
      attempt: 1,
      status: 200,
      error: null,
      durationMs: expect.any(Number),
    });
    expect(deliveriesOf([skipped])).toEqual([]);
    await waitFor(() => JSON.parse(readFileSync(cursorFileOf(other.id)!, "utf8")).id === wanted || undefined, { what: "the saved cursor" });
    expect(await proc.stop("SIGINT")).toBe(0);
    expect(proc.output().trim().split("\n")).toHaveLength(1);
    expect((await api.events.get(other.id, skipped)).forwardedResponse).toEqual({});
  });

  it("records a refused connection as the attempt's error: <-- ERR connection_refused", async () => {
    const other = await api.endpoints.create({ slug: "listen-refused" });
    const closed = `http://127.0.0.1:${await freePort()}/nowhere`;
    const proc = listen("listen-refused", "--forward-to", closed);
    await proc.waitForOutput(/forwarding listen-refused/);
    const id = await capture(other.webhookUrl, '{"type":"refused.one"}');
    await proc.waitForOutput(/<-- ERR connection_refused POST \/nowhere refused\.one \d+ ms\n/);
    const fr = await delivery(other.id, id);
    expect(fr.state).toBe("failed");
    expect(fr.attempts[0]).toMatchObject({ n: 1, trigger: "cli", status: null, error: "connection_refused", url: closed });
    expect(await proc.stop("SIGINT")).toBe(0);
  });

  it("waits out the gateway while it is down, then delivers what came in between", async () => {
    const proc = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`);
    await proc.waitForOutput(/every capture after/);
    expect(await server.stop("SIGTERM")).toBe(0);
    await proc.waitForOutput(/retrying in \d+ s/);
    await startServer();
    const id = await stripeCapture(ep.webhookUrl, "after.outage");
    await proc.waitForOutput(/after\.outage \d+ ms\n/, 30_000);
    expect(deliveriesOf([id])).toHaveLength(1);
    expect(await proc.stop("SIGINT")).toBe(0);
  });
});
