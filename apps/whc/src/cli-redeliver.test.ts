import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { EndpointJson, EventListJson, RedeliveryJobJson, RedeliveryJobListJson } from "@whc/api-model";
import { buildApps, startAllInOne, tempDir, waitFor, type RunningProcess } from "@whc/testing";

/**
 * `whc redeliver` and `whc redeliveries` (design §18) against a real all-in-one process: a
 * relay endpoint's captures delivered to a local app, then counted, redelivered by filter and
 * followed to the end with --wait; the exit codes scripts branch on.
 */

let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;
let app: http.Server;
/** What the local app received: [path, delivery id, attempt]. */
const received: [string, string, string][] = [];
let endpoint: EndpointJson;
let captured: string[];

interface Run {
  code: number;
  text: string;
  stderr: string;
}

function run(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [whc, ...args], { env: { ...env, PATH: process.env.PATH ?? "" } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, text: stdout, stderr });
    });
  });
}

async function ok(...args: string[]): Promise<string> {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`whc ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.text;
}

const json = <T>(text: string) => JSON.parse(text) as T;

beforeAll(async () => {
  app = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push([req.url ?? "", String(req.headers["x-whc-delivery-id"]), String(req.headers["x-whc-attempt"])]);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-redeliver-");
  const aio = await startAllInOne(mains["all-in-one"]!, dir.path, {
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_POLL_MS: "100",
    WHC_QUOTA_API_RPS: "1000",
  });
  server = aio.proc;
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: aio.gatewayUrl };
  env.WHC_API_KEY = json<{ key: string }>(await ok("--json", "keys", "create", "--account", "cli-redeliver")).key;
  const res = await fetch(`${aio.gatewayUrl}/v1/endpoints`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.WHC_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ slug: "orders", operatingMode: "relay", destinations: [{ name: "app", url: `${appUrl}/in` }] }),
  });
  endpoint = (await res.json()) as EndpointJson;
  captured = [];
  for (const type of ["order.created", "order.paid", "order.created", "order.paid"]) {
    const sent = await fetch(endpoint.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type }) });
    captured.push(((await sent.json()) as { id: string }).id);
  }
  await waitFor(async () => json<EventListJson>(await ok("--json", "events", "list", "orders", "--forward-state", "delivered")).items.length === 4 || undefined, {
    what: "the captures delivered",
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
  await new Promise((resolve) => app?.close(resolve));
});

describe("whc redeliver", () => {
  it("counts with --dry-run what a job would redo, by the list's filters", async () => {
    expect(await ok("redeliver", "orders", "--dry-run")).toBe("4 deliveries of orders would be redelivered\n");
    expect(json<{ count: number }>(await ok("--json", "redeliver", "orders", "--dry-run", "--type", "order.paid"))).toEqual({ count: 2 });
    expect(json<{ count: number }>(await ok("--json", "redeliver", endpoint.id, "--dry-run", "--forward-state", "failed"))).toEqual({ count: 0 });
    expect(json<{ count: number }>(await ok("--json", "redeliver", "orders", "--dry-run", "--destination", endpoint.destinations![0]!.id, "--from", "1h"))).toEqual({ count: 4 });
    expect(await ok("redeliver", "orders", "--dry-run", "--to", "2020-01-01T00:00:00Z")).toBe("0 deliveries of orders would be redelivered\n");
    expect((await ok("--json", "redeliveries", "list", "orders")).trim()).toBe('{"items":[]}');
  });

  it("starts a job and follows it with --wait to done: each matching event sent once more, trigger bulk", async () => {
    const before = received.length;
    const r = await run(["--json", "redeliver", "orders", "--type", "order.created", "--wait", "--interval", "200"]);
    expect(r.code, r.stderr).toBe(0);
    const job = json<RedeliveryJobJson>(r.text);
    expect(job).toMatchObject({ state: "done", total: 2, queued: 2, done: 2, failed: 0, filter: { eventType: "order.created" } });
    const again = received.slice(before);
    expect(again.map(([, id]) => id).sort()).toEqual([captured[0], captured[2]].sort());
    expect(again.every(([path, , attempt]) => path === "/in" && attempt === "2")).toBe(true);
    const detail = (await (await fetch(`${env.WHC_API_URL}/v1/endpoints/${endpoint.id}/events/${captured[0]}`, { headers: { authorization: `Bearer ${env.WHC_API_KEY}` } })).json()) as {
      forwardedResponse: { attempts: { n: number; trigger: string }[] };
    };
    expect(detail.forwardedResponse.attempts.map((a) => [a.n, a.trigger])).toEqual([
      [1, "initial"],
      [2, "bulk"],
    ]);
    // A person reads the progress on stderr and the job on stdout.
    const human = await run(["redeliver", "orders", "--type", "order.paid", "--wait", "--interval", "200"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toMatch(/started: 2 deliveries/);
    expect(human.text).toMatch(/^redelivery job [0-9a-f-]{36} done: 2\/2 ended \(2 delivered, 0 failed\), 2 put back\n$/);
    const list = json<RedeliveryJobListJson>(await ok("--json", "redeliveries", "list", "orders"));
    expect(list.items.map((j) => [j.id === job.id, j.state])).toEqual([
      [false, "done"],
      [true, "done"],
    ]);
    expect(json<RedeliveryJobJson>(await ok("--json", "redeliveries", "get", "orders", job.id))).toEqual(job);
    // A finished job cancels to itself.
    expect(json<RedeliveryJobJson>(await ok("--json", "redeliveries", "cancel", "orders", job.id)).state).toBe("done");
  });

  it("prints the job without --wait, and exits with the table's codes on bad input and unknown names", async () => {
    const started = await run(["redeliver", "orders", "--type", "nothing.like.it"]);
    expect(started.code).toBe(0);
    expect(started.text).toMatch(/nothing to redeliver \(done\)/);
    expect((await run(["redeliver", "no-such-endpoint", "--dry-run"])).code).toBe(2);
    const bad = await run(["redeliver", "orders", "--destination", "not-a-uuid"]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/filter\.destinationId/)]);
    expect((await run(["redeliver", "orders", "--forward-state", "lost"])).code).toBe(1);
    expect((await run(["redeliveries", "get", "orders", "01a20000-0000-7000-8000-000000000000"])).code).toBe(2);
    const plain = await fetch(`${env.WHC_API_URL}/v1/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.WHC_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ slug: "plain" }),
    });
    expect(plain.status).toBe(201);
    const none = await run(["redeliver", "plain"]);
    expect([none.code, none.stderr]).toEqual([1, expect.stringMatching(/forward destination/)]);
  });
});
