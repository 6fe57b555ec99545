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
  return listenWith({}, ...args);
}

function listenWith(env: Record<string, string>, ...args: string[]): RunningProcess {
  const proc = startNode(mains.whc!, { WHC_API_URL: gatewayUrl, WHC_API_KEY: KEY, XDG_STATE_HOME: state.path, ...env }, ["listen", ...args]);
  listeners.push(proc);
  return proc;
}

/** The process's exit code, once it has exited by itself. */
function exitCode(proc: RunningProcess): Promise<number | null> {
  if (proc.child.exitCode !== null) return Promise.resolve(proc.child.exitCode);
  return new Promise((resolve) => proc.child.once("exit", (code) => resolve(code)));
}

/** The --json lines printed so far (stdout's JSON objects; stderr's lines are not JSON). */
function jsonLines(proc: RunningProcess): Record<string, unknown>[] {
  return proc
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function startServer(): Promise<void> {
  server = startNode(mains["all-in-one"]!, serverEnv);
  await server.waitForOutput(/webhook-capture ready/);
}

/** A Stripe capture of `type`, signed by Stripe's own library `ageS` seconds ago; its event id. */
async function stripeCapture(url: string, type: string, ageS = 0): Promise<string> {
  const payload = JSON.stringify({ id: `evt_${type}`, object: "event", type, data: { object: { amount: 4200 } } }, null, 1);
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET, timestamp: Math.floor(Date.now() / 1000) - ageS });
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
    // A listener that stops without its goodbye is gone this long after its last heartbeat.
    WHC_LISTENER_TTL_S: "2",
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
    // A fresh signature goes as captured; every line names its event.
    await proc.waitForOutput(new RegExp(`<-- 200 POST /webhooks/stripe/events\\?x=1 invoice\\.paid \\d+ ms \\[${id}\\]\\n`));
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
    await again.waitForOutput(/missed\.three \d+ ms \[/);
    const live = await stripeCapture(`${ep.webhookUrl}/live`, "live.one");
    await again.waitForOutput(/live\.one \d+ ms \[/);

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
    await proc.waitForOutput(/after\.from\.now \d+ ms \[/);
    expect(proc.output()).not.toContain("while.away");
    expect(deliveriesOf([skipped])).toEqual([]);
    expect(deliveriesOf([live])).toHaveLength(1);
    expect(await proc.stop("SIGTERM")).toBe(0);
  });

  it("--json: one object per delivery; --events: only those types, the cursor moving past the others", async () => {
    const other = await api.endpoints.create({ slug: "listen-json", redact: { jsonPaths: ["$.card"] } });
    const proc = listen(other.id, "--forward-to", `${appUrl}/json`, "--json", "--events", "wanted.type,also.wanted");
    await waitFor(() => cursorFileOf(other.id), { what: "the cursor file" });
    const skipped = await capture(other.webhookUrl, JSON.stringify({ type: "unwanted.type" }), { "Content-Type": "application/json" });
    const wanted = await capture(`${other.webhookUrl}/x?y=z`, JSON.stringify({ type: "wanted.type" }), { "Content-Type": "application/json" });
    await proc.waitForOutput(/\{"type":"delivery".*\}\n/);
    const line = jsonLines(proc)[0]!;
    expect(line).toEqual({
      type: "delivery",
      eventId: wanted,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      eventType: "wanted.type",
      method: "POST",
      url: `${appUrl}/json/x?y=z`,
      attempt: 1,
      status: 200,
      error: null,
      durationMs: expect.any(Number),
      resigned: false,
      tries: 1,
      warnings: [],
    });
    expect(deliveriesOf([skipped])).toEqual([]);
    // A capture stored redacted reaches the app redacted, and the line says so (design §16).
    const redacted = await capture(other.webhookUrl, JSON.stringify({ type: "also.wanted", card: "4242424242424242" }), { "Content-Type": "application/json" });
    await waitFor(() => jsonLines(proc).find((l) => l.eventId === redacted), { what: "the redacted capture's line" });
    expect(jsonLines(proc).find((l) => l.eventId === redacted)).toMatchObject({ status: 200, warnings: [{ code: "body_redacted" }] });
    expect(received.find((r) => r.body.includes('"type":"also.wanted"'))?.body.toString()).toBe('{"type":"also.wanted","card":"[redacted]"}');
    await waitFor(() => JSON.parse(readFileSync(cursorFileOf(other.id)!, "utf8")).id === redacted || undefined, { what: "the saved cursor" });
    expect(await proc.stop("SIGINT")).toBe(0);
    expect(jsonLines(proc)).toHaveLength(2);
    expect((await api.events.get(other.id, skipped)).forwardedResponse).toEqual({});
  });

  it("records a refused connection as the attempt's error once --retry-for is spent: <-- ERR connection_refused, then skipped", async () => {
    const other = await api.endpoints.create({ slug: "listen-refused" });
    const closed = `http://127.0.0.1:${await freePort()}/nowhere`;
    const proc = listen("listen-refused", "--forward-to", closed, "--retry-for", "1s");
    await proc.waitForOutput(/forwarding listen-refused/);
    const id = await capture(other.webhookUrl, '{"type":"refused.one"}');
    await proc.waitForOutput(new RegExp(`<-- ERR connection_refused POST /nowhere refused\\.one \\d+ ms \\(try \\d+\\) \\[${id}\\]\\n`));
    await proc.waitForOutput(new RegExp(`--- skipped POST /nowhere refused\\.one \\[${id}\\]: no answer for 1(\\.\\d)?s \\(connection_refused\\); the cursor moves past it`));
    const fr = await delivery(other.id, id);
    expect(fr.state).toBe("failed");
    expect(fr.attempts[0]).toMatchObject({ n: 1, trigger: "cli", status: null, error: "connection_refused", url: closed });
    expect(await proc.stop("SIGINT")).toBe(0);
  });

  it("waits out the gateway while it is down, naming its URL once, then delivers what came in between", async () => {
    const proc = listen("listen-stripe", "--forward-to", `${appUrl}/webhooks`);
    await proc.waitForOutput(/every capture after/);
    expect(await server.stop("SIGTERM")).toBe(0);
    try {
      // Refused, or reset when the stop cut a request listen had open: either is said, with its cause.
      await proc.waitForOutput(new RegExp(`the API at ${gatewayUrl} cannot be reached \\(fetch failed \\((ECONNREFUSED|ECONNRESET)\\)\\); trying again until it answers`));
      // Long enough for several tries (1 s, 2 s...), said once all the same.
      await new Promise((r) => setTimeout(r, 3500));
    } finally {
      // The files after this one need the server, whatever happened here.
      await startServer();
    }
    await proc.waitForOutput(new RegExp(`the API at ${gatewayUrl} answers again \\(after [\\d.]+m?s\\)`), 30_000);
    const id = await stripeCapture(ep.webhookUrl, "after.outage");
    await proc.waitForOutput(/after\.outage \d+ ms \[/, 30_000);
    expect(deliveriesOf([id])).toHaveLength(1);
    expect(await proc.stop("SIGINT")).toBe(0);
    // Said once per outage: a request on a kept-alive connection may still be answered while the
    // gateway drains, so the stop can read as two outages; each is said once, and answered.
    const said = proc.output().match(/cannot be reached|answers again/g) ?? [];
    expect(said.length).toBeGreaterThanOrEqual(2);
    said.forEach((line, i) => expect(line).toBe(i % 2 === 0 ? "cannot be reached" : "answers again"));
    expect(said.at(-1)).toBe("answers again");
  });
});

describe("whc listen: signatures that went stale (design §19)", () => {
  it("re-signs a Stripe event caught up 10 minutes late, which the app's constructEvent accepts; sent as captured, it is refused", async () => {
    const ep = await api.endpoints.create({ slug: "listen-late", provider: "stripe", secret: STRIPE_SECRET });
    // Signed by Stripe 10 minutes ago: what a listen that was away that long catches up on.
    const id = await stripeCapture(`${ep.webhookUrl}/late`, "invoice.late", 600);

    const resigned = listen("listen-late", "--forward-to", `${appUrl}/webhooks`, "--resign", "--since", id);
    await resigned.waitForOutput(new RegExp(`<-- 200 POST /webhooks/late invoice\\.late \\d+ ms \\(re-signed\\) \\[${id}\\]`));
    expect(await resigned.stop("SIGINT")).toBe(0);
    const [got] = deliveriesOf([id]);
    expect(got!.verifyError).toBeUndefined();
    expect(got!.verifiedType).toBe("invoice.late");
    expect(got!.headers["stripe-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    // The same event without re-signing: the app's Stripe library refuses it.
    const asCaptured = listen("listen-late", "--forward-to", `${appUrl}/webhooks`, "--since", id, "--no-resign");
    await asCaptured.waitForOutput(new RegExp(`<-- 400 POST /webhooks/late invoice\\.late \\d+ ms \\[${id}\\]`));
    expect(await asCaptured.stop("SIGINT")).toBe(0);
    expect(deliveriesOf([id])[1]!.verifyError).toMatch(/Timestamp outside the tolerance zone/);

    // --resign=always re-signs even a fresh one; the JSON line says so.
    const fresh = await stripeCapture(ep.webhookUrl, "invoice.fresh");
    const always = listen("listen-late", "--forward-to", `${appUrl}/webhooks`, "--since", fresh, "--resign=always", "--json");
    await always.waitForOutput(/"type":"delivery"/);
    expect(await always.stop("SIGINT")).toBe(0);
    expect(jsonLines(always)[0]).toMatchObject({ eventId: fresh, status: 200, resigned: true });
    expect(deliveriesOf([fresh])[0]!.verifiedType).toBe("invoice.fresh");
  });

  it("without a secret to sign with, says once that it sends signatures as captured, and goes on", async () => {
    const ep = await api.endpoints.create({ slug: "listen-no-secret", provider: "stripe" });
    const ids = [await stripeCapture(ep.webhookUrl, "nosecret.one"), await stripeCapture(ep.webhookUrl, "nosecret.two")];
    const proc = listen("listen-no-secret", "--forward-to", `${appUrl}/webhooks`, "--since", "1h", "--resign=always");
    await proc.waitForOutput(/nosecret\.two \d+ ms \[/);
    expect(await proc.stop("SIGINT")).toBe(0);
    expect(proc.output().match(/re-signing is not possible \(the endpoint has no secret/g)).toHaveLength(1);
    expect(deliveriesOf(ids)).toHaveLength(2);
  });
});

describe("whc listen: a local app that does not answer", () => {
  /** The local app on a port of its own, stopped and started again there. */
  async function appOnPort(port: number): Promise<http.Server> {
    const server = http.createServer(localApp);
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    return server;
  }

  it("tries an event again while the app is down, later ones waiting: every event once, in order, none skipped", async () => {
    const ep = await api.endpoints.create({ slug: "listen-down" });
    const port = await freePort();
    const proc = listen("listen-down", "--forward-to", `http://127.0.0.1:${port}/hooks`, "--retry-for", "1m");
    await proc.waitForOutput(/forwarding listen-down/);
    // The app is down (20 s in the field, 4 s here) while three events arrive.
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await capture(ep.webhookUrl, `{"type":"down.${n}"}`));
    await proc.waitForOutput(new RegExp(`\\[${ids[0]}\\]: no answer \\(connection_refused\\); trying again for up to 1m, later events wait`));
    await new Promise((r) => setTimeout(r, 4000));
    const up = await appOnPort(port);
    try {
      await proc.waitForOutput(/down\.3 \d+ ms \[/, 30_000);
      expect(await proc.stop("SIGINT")).toBe(0);
      const got = deliveriesOf(ids);
      expect(got.map(deliveryId)).toEqual(ids);
      expect(proc.output()).not.toContain("skipped");
      const lines = proc.output().split("\n").filter((l) => l.startsWith("<-- "));
      expect(lines.map((l) => l.split(" ")[1])).toEqual(["200", "200", "200"]);
      expect(lines[0]).toMatch(/\(try \d+\)/);
      for (const id of ids) expect((await delivery(ep.id, id)).attempts.map((a) => [a.trigger, a.status])).toEqual([["cli", 200]]);
    } finally {
      up.close();
    }
  });

  it("with --retry-for shorter than the outage, reports the event it moves past (a line, and in --json), and goes on", async () => {
    const ep = await api.endpoints.create({ slug: "listen-gives-up" });
    const port = await freePort();
    const human = listen("listen-gives-up", "--forward-to", `http://127.0.0.1:${port}/hooks`, "--retry-for", "1500ms");
    const json = listenWith({ XDG_STATE_HOME: `${state.path}/json` }, "listen-gives-up", "--forward-to", `http://127.0.0.1:${port}/hooks`, "--retry-for", "1500ms", "--json");
    await human.waitForOutput(/forwarding listen-gives-up/);
    await waitFor(async () => ((await api.listeners.list(ep.id)).items.length === 2 ? true : undefined), { what: "both listeners registered" });
    const lost = await capture(ep.webhookUrl, '{"type":"lost.one"}');
    await human.waitForOutput(new RegExp(`--- skipped POST /hooks lost\\.one \\[${lost}\\]: no answer for 1\\.\\ds \\(connection_refused\\); the cursor moves past it`));
    await json.waitForOutput(/"type":"skipped"/);
    const up = await appOnPort(port);
    try {
      const after = await capture(ep.webhookUrl, '{"type":"after.one"}');
      await human.waitForOutput(new RegExp(`<-- 200 POST /hooks after\\.one \\d+ ms \\[${after}\\]`));
      await json.waitForOutput(new RegExp(`"type":"delivery","eventId":"${after}"`));
      expect(await human.stop("SIGINT")).toBe(0);
      expect(await json.stop("SIGINT")).toBe(0);
      expect(jsonLines(json).map((l) => [l.type, l.eventId])).toEqual([
        ["retrying", lost],
        ["delivery", lost],
        ["skipped", lost],
        ["delivery", after],
      ]);
      expect(jsonLines(json)[2]).toMatchObject({ reason: "no_answer", error: "connection_refused", eventType: "lost.one", retriedForMs: expect.any(Number) });
    } finally {
      up.close();
    }
  });
});

describe("whc listen --since", () => {
  it("starts from a duration ago, from an ISO time, or from an event (included), whatever the saved cursor says", async () => {
    const ep = await api.endpoints.create({ slug: "listen-since" });
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await capture(ep.webhookUrl, `{"type":"since.${n}"}`));
    // A run that saves its cursor after all three.
    const first = listen("listen-since", "--forward-to", `${appUrl}/since`);
    await first.waitForOutput(/new captures/);
    expect(await first.stop("SIGINT")).toBe(0);

    const run = async (...args: string[]) => {
      const proc = listen("listen-since", "--forward-to", `${appUrl}/since`, ...args);
      await proc.waitForOutput(/since\.3 \d+ ms \[/);
      expect(await proc.stop("SIGINT")).toBe(0);
      return [...proc.output().matchAll(/^<-- 200 POST \/since (since\.\d) \d+ ms \[([0-9a-f-]{36})\]$/gm)].map((m) => [m[1], m[2]]);
    };
    expect(await run("--since", "2h")).toEqual([["since.1", ids[0]], ["since.2", ids[1]], ["since.3", ids[2]]]);
    const second = await api.events.get(ep.id, ids[1]!);
    expect(await run("--since", second.receivedAt)).toEqual([["since.2", ids[1]], ["since.3", ids[2]]]);
    expect(await run("--since", ids[2]!)).toEqual([["since.3", ids[2]]]);

    const unknown = listen("listen-since", "--forward-to", `${appUrl}/since`, "--since", "01a20000-0000-7000-8000-000000000000");
    expect(await exitCode(unknown)).toBe(2);
    expect(unknown.output()).toContain("--since: no event 01a20000-0000-7000-8000-000000000000 in listen-since");
  });
});

describe("whc listen: errors that end it", () => {
  it("exits 3 on a refused key, saying why (and as a JSON line with --json)", async () => {
    const bad = `whc_${"x".repeat(40)}`;
    const human = listenWith({ WHC_API_KEY: bad }, "listen-stripe", "--forward-to", appUrl);
    expect(await exitCode(human)).toBe(3);
    expect(human.output()).toMatch(/error: A valid API key is required\. \(unauthorized, request [0-9a-f-]{36}\)/);
    const json = listenWith({ WHC_API_KEY: bad }, "--json", "listen-stripe", "--forward-to", appUrl);
    expect(await exitCode(json)).toBe(3);
    expect(jsonLines(json)).toEqual([
      { type: "error", status: 401, error: "unauthorized", message: "A valid API key is required.", requestId: expect.any(String), exitCode: 3 },
    ]);
  });

  it("exits 2 when the endpoint is deleted while it listens", async () => {
    const ep = await api.endpoints.create({ slug: "listen-deleted" });
    const proc = listen("listen-deleted", "--forward-to", appUrl, "--json");
    await waitFor(async () => ((await api.listeners.list(ep.id)).items.length ? true : undefined), { what: "the listener" });
    await api.endpoints.delete(ep.id);
    expect(await exitCode(proc)).toBe(2);
    expect(jsonLines(proc).at(-1)).toMatchObject({ type: "error", status: 404, error: "not_found", exitCode: 2 });
    expect(proc.output()).toContain(`error: the endpoint listen-deleted (${ep.id}) no longer exists (404 not_found)`);
  });

  it("with --json, says in a JSON line that the API cannot be reached, naming it once however long it tries", async () => {
    const port = await freePort();
    const nowhere = `http://127.0.0.1:${port}`;
    const proc = listenWith({ WHC_API_URL: nowhere }, "--json", "listen-stripe", "--forward-to", appUrl);
    await proc.waitForOutput(/"type":"unreachable"/);
    await new Promise((r) => setTimeout(r, 3500));
    expect(await proc.stop("SIGINT")).toBe(0);
    expect(jsonLines(proc)).toEqual([{ type: "unreachable", url: nowhere, status: 0, error: "unreachable", message: "fetch failed (ECONNREFUSED)" }]);
  });
});

describe("listener liveness (design §19)", () => {
  it("shows a running listen with its lastSeenAt moving; gone at once after Ctrl-C, and WHC_LISTENER_TTL_S after a kill", async () => {
    const ep = await api.endpoints.create({ slug: "listen-live" });
    const first = await capture(ep.webhookUrl, '{"type":"live.one"}');
    const proc = listen("listen-live", "--forward-to", `${appUrl}/live`, "--heartbeat-interval", "0.2", "--since", first);
    await proc.waitForOutput(/live\.one \d+ ms \[/);
    const seen = await waitFor(
      async () => {
        const [l] = (await api.listeners.list(ep.id)).items;
        return l?.cursor?.id === first ? l : undefined;
      },
      { what: "the listener at its cursor" },
    );
    expect(seen).toMatchObject({ host: expect.any(String), lagEvents: 0, lastError: null, stalled: false });
    await waitFor(async () => {
      const [l] = (await api.listeners.list(ep.id)).items;
      return l && Date.parse(l.lastSeenAt) > Date.parse(seen.lastSeenAt) ? true : undefined;
    }, { what: "a later heartbeat" });
    expect(await proc.stop("SIGINT")).toBe(0);
    expect((await api.listeners.list(ep.id)).items).toEqual([]);

    const killed = listen("listen-live", "--forward-to", `${appUrl}/live`, "--heartbeat-interval", "0.2");
    await waitFor(async () => ((await api.listeners.list(ep.id)).items.length === 1 ? true : undefined), { what: "the second listener" });
    await killed.stop("SIGKILL");
    const lastSeen = Date.parse((await api.listeners.list(ep.id)).items[0]!.lastSeenAt);
    const gone = await waitFor(async () => ((await api.listeners.list(ep.id)).items.length === 0 ? Date.now() : undefined), { what: "the killed listener gone" });
    expect(gone - lastSeen).toBeGreaterThanOrEqual(2000);
  });
});
