import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import Stripe from "stripe";
import { buildApps, startAllInOne, tempDir, waitFor, WORKSPACE_ROOT, type AllInOne } from "@whc/testing";

const run = promisify(execFile);
const SECRET = "whsec_scenario_app_secret";
const EVENTS = 20;
const stripe = new Stripe("sk_test_x");
let server: AllInOne;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;
/** A local app verifying with the stripe package's constructEvent; `answer` sets what it says to a valid event. */
let app: http.Server;
let appUrl: string;
let answer = 200;
let received: { id: string; path: string; atMs: number; amount: unknown }[] = [];
let refused: string[] = [];

async function cli(...args: string[]) {
  const { stdout } = await run(process.execPath, [whc, ...args], { env: { ...env, PATH: process.env.PATH ?? "" }, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

async function cliFailure(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await cli(...args);
  } catch (err) {
    return err as { code: number; stdout: string; stderr: string };
  }
  throw new Error(`whc ${args.join(" ")} succeeded`);
}

function startApp(): Promise<void> {
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        const event = stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET);
        received.push({ id: event.id, path: req.url ?? "", atMs: Date.now(), amount: (event.data.object as { amount_paid?: unknown }).amount_paid });
        res.writeHead(answer, { "content-type": "application/json" }).end('{"received":true}');
      } catch (err) {
        refused.push((err as Error).message);
        res.writeHead(400, { "content-type": "text/plain" }).end(`Webhook Error: ${(err as Error).message}`);
      }
    });
  });
  return new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
}

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-scenario-");
  server = await startAllInOne(mains["all-in-one"]!, dir.path, { WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true" });
  // whc keys creates the key in the same data directory.
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: server.gatewayUrl };
  env.WHC_API_KEY = (JSON.parse(await cli("--json", "keys", "create", "--account", "scenarios")) as { key: string }).key;
  const ep = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "billing", "--provider", "stripe", "--secret", SECRET)) as { webhookUrl: string };

  // 20 Stripe events signed 10 minutes ago: stale for constructEvent's 5-minute tolerance.
  const staleTimestamp = Math.floor(Date.now() / 1000) - 600;
  for (let i = 0; i < EVENTS; i += 1) {
    const body = JSON.stringify({ id: `evt_${i}`, object: "event", type: "invoice.paid", data: { object: { object: "invoice", amount_paid: 100 + i } } });
    const signature = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: staleTimestamp });
    const res = await fetch(`${ep.webhookUrl}${i % 2 ? "/sub?n=1" : ""}`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": signature }, body });
    expect(res.status).toBe(200);
  }
  await startApp();
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  await server?.proc.stop();
  await new Promise((resolve) => app?.close(resolve));
  dir?.remove();
});

const ids = Array.from({ length: EVENTS }, (_, i) => `evt_${i}`);

describe("whc scenario", () => {
  let file: string;

  it("record writes the 20 captures oldest first, in the documented format, with their exact bytes and sub-paths", async () => {
    const text = await cli("scenario", "record", "billing");
    file = path.join(dir.path, "s.json");
    writeFileSync(file, text);
    const s = JSON.parse(text) as { provider: string; events: { offsetMs: number; path: string; query: string; headers: Record<string, string[]>; bodyBase64: string }[] };
    const schema = JSON.parse(readFileSync(path.join(WORKSPACE_ROOT, "docs", "scenario.schema.json"), "utf8")) as object;
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
    expect(validate(s), JSON.stringify(validate.errors)).toBe(true);
    expect(s.provider).toBe("stripe");
    expect(s.events.map((e) => (JSON.parse(Buffer.from(e.bodyBase64, "base64").toString()) as { id: string }).id)).toEqual(ids);
    expect(s.events[0]!.offsetMs).toBe(0);
    expect(s.events.every((e, i) => i === 0 || e.offsetMs >= s.events[i - 1]!.offsetMs)).toBe(true);
    expect([s.events[1]!.path, s.events[1]!.query, s.events[0]!.path]).toEqual(["/sub", "n=1", ""]);
    expect(Object.keys(s.events[0]!.headers).map((h) => h.toLowerCase())).toContain("stripe-signature");
    expect(Object.keys(s.events[0]!.headers).map((h) => h.toLowerCase())).not.toContain("host");
    // Filters narrow what is recorded.
    const none = JSON.parse(await cli("scenario", "record", "billing", "--type", "charge.refunded")) as { events: unknown[] };
    expect(none.events).toEqual([]);
  });

  it("play --speed max --resign: every event freshly signed, verified by the app's constructEvent, in order", async () => {
    received = [];
    const out = await cli("scenario", "play", file, "--to", appUrl, "--speed", "max", "--resign", "--secret", SECRET);
    expect(received.map((r) => r.id)).toEqual(ids);
    expect(received[1]!.path).toBe("/webhooks/sub?n=1");
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(EVENTS);
    expect(lines[0]).toMatch(/^200 +\d+ ms +event 1\/20 +\(re-signed\)$/);
  });

  it("play at the recorded gaps (shortened): in order, never sooner than the gaps divided by the speed", async () => {
    const s = JSON.parse(readFileSync(file, "utf8")) as { events: { offsetMs: number }[] };
    s.events.forEach((e, i) => (e.offsetMs = i * 40));
    const gapped = path.join(dir.path, "gapped.json");
    writeFileSync(gapped, JSON.stringify(s));
    received = [];
    const startedMs = Date.now();
    const lines = JSON.parse(`[${(await cli("--json", "scenario", "play", gapped, "--to", appUrl, "--speed", "2", "--resign", "--secret", SECRET)).trim().split("\n").join(",")}]`) as { index: number; status: number; ok: boolean }[];
    expect(lines.map((l) => [l.index, l.status, l.ok])).toEqual(ids.map((_, i) => [i + 1, 200, true]));
    expect(received.map((r) => r.id)).toEqual(ids);
    // Event 20 was due 19 * 40 / 2 ms after play started (which was after startedMs).
    expect(received[EVENTS - 1]!.atMs - startedMs).toBeGreaterThanOrEqual((19 * 40) / 2);
  });

  it("exits 1, after sending every event, when the app refuses the stale signatures or answers 500", async () => {
    refused = [];
    const stale = await cliFailure("scenario", "play", file, "--to", appUrl, "--speed", "max");
    expect(stale.code).toBe(1);
    expect(refused).toHaveLength(EVENTS);
    expect(refused[0]).toContain("tolerance");
    expect(stale.stderr).toContain("20 of 20 events were not answered 2xx");

    answer = 500;
    received = [];
    const failing = await cliFailure("scenario", "play", file, "--to", appUrl, "--speed", "max", "--resign", "--secret", SECRET);
    answer = 200;
    expect(failing.code).toBe(1);
    expect(received).toHaveLength(EVENTS);
    expect(failing.stdout.trim().split("\n")[0]).toMatch(/^500 /);
  });

  it("play --endpoint sends through the endpoint's own URL; a file that is not a scenario is refused", async () => {
    const before = (JSON.parse(await cli("--json", "endpoints", "get", "billing")) as { eventCount: number }).eventCount;
    await cli("scenario", "play", file, "--endpoint", "billing", "--speed", "max", "--resign", "--secret", SECRET);
    await waitFor(async () => (JSON.parse(await cli("--json", "endpoints", "get", "billing")) as { eventCount: number }).eventCount === before + EVENTS || undefined, {
      what: "the replayed captures",
    });
    const verified = JSON.parse(await cli("--json", "events", "list", "billing", "--verification", "verified", "--limit", "200")) as { items: unknown[] };
    expect(verified.items).toHaveLength(EVENTS);

    const bad = path.join(dir.path, "bad.json");
    writeFileSync(bad, JSON.stringify({ version: 2, events: [] }));
    const refusedFile = await cliFailure("scenario", "play", bad, "--to", appUrl);
    expect(refusedFile.code).toBe(1);
    expect(refusedFile.stderr).toContain("is not a scenario");
  });
});

describe("whc events replay --edit", () => {
  it("sends the edited body, re-signed with --secret, which the app's constructEvent accepts", async () => {
    const [first] = (JSON.parse(await cli("--json", "events", "list", "billing", "--limit", "200")) as { items: { id: string }[] }).items;
    received = [];
    const out = await cli("events", "replay", "billing", first!.id, "--to", appUrl, "--secret", SECRET, "--edit", '{"jsonMergePatch":{"data":{"object":{"amount_paid":999}}}}');
    expect(out).toMatch(/^delivered: HTTP 200 in \d+ ms \(resign, edited\)/);
    expect(received.map((r) => r.amount)).toEqual([999]);
    const bad = await cliFailure("events", "replay", "billing", first!.id, "--to", appUrl, "--edit", "not json");
    expect(bad.code).toBe(1);
  });
});
