import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import path from "node:path";
import { hashApiKey } from "@whc/identity";
import { buildApps, freePort, startNode, tempDir, waitFor, type RunningProcess } from "@whc/testing";

const run = promisify(execFile);
let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;
let ingestUrl: string;

async function cli(...args: string[]) {
  const { stdout } = await run(process.execPath, [whc, ...args], { env: { ...env, PATH: process.env.PATH ?? "" } });
  return stdout;
}

/** A run expected to fail: its exit code and what it printed. */
async function cliFailure(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await cli(...args);
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  throw new Error(`whc ${args.join(" ")} succeeded`);
}

async function useNewKey(account: string): Promise<void> {
  env.WHC_API_KEY = (JSON.parse(await cli("--json", "keys", "create", "--account", account)) as { key: string }).key;
}

/** The status a capture sent to `url` is answered with. */
async function captureStatus(url: string): Promise<number> {
  const res = await fetch(url, { method: "POST", body: '{"type":"probe"}' });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-");
  const [gw, ing] = [await freePort(), await freePort()];
  ingestUrl = `http://127.0.0.1:${ing}`;
  const serverEnv = {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: ingestUrl,
    WHC_LOG_LEVEL: "warn",
    // The forwarding test relays to a destination on loopback.
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "50",
  };
  server = startNode(mains["all-in-one"]!, serverEnv);
  await server.waitForOutput(/whc_[A-Za-z0-9]{32,}/);
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: `http://127.0.0.1:${gw}` };
  await waitFor(async () => (await fetch(`${env.WHC_API_URL}/healthz`)).ok || undefined, { what: "server" });
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe("whc", () => {
  it("creates an account's first key beside a running server, then scoped keys over /v1: lists, audits and revokes them", async () => {
    const created = JSON.parse(await cli("--json", "keys", "create", "--account", "cli-team")) as { id: string; key: string; scopes: string[] };
    expect(created.key).toMatch(/^whc_[A-Za-z0-9]{40}$/);
    expect(created.scopes).toEqual(["*"]);
    env.WHC_API_KEY = created.key;
    // The catalog-direct form is for an account's first key only.
    const again = await cliFailure("keys", "create", "--account", "cli-team");
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("already has a key")]);

    const endpoint = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "from-cli")) as { id: string; webhookUrl: string };
    expect(endpoint.webhookUrl).toBe(`${ingestUrl}/h/${endpoint.id}`);

    const scoped = JSON.parse(
      await cli("--json", "keys", "create", "--name", "ci-reader", "--scope", "endpoints:read", "--scope", "events:read", "--endpoint", "from-cli", "--expires", "30d"),
    ) as { id: string; key: string; endpointIds: string[]; expiresAt: string };
    expect(scoped.endpointIds).toEqual([endpoint.id]);
    expect(Date.parse(scoped.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    const listed = JSON.parse(await cli("--json", "keys", "list")) as { items: { id: string; name: string }[] };
    expect(listed.items.map((k) => k.name)).toEqual(["first key", "ci-reader"]);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    // The scoped key reads its endpoint and may do nothing else: exit 5 (forbidden).
    const reader = { ...env, WHC_API_KEY: scoped.key };
    const { stdout } = await run(process.execPath, [whc, "endpoints", "list"], { env: { ...reader, PATH: process.env.PATH ?? "" } });
    expect(stdout).toContain("from-cli");
    const refused = await run(process.execPath, [whc, "endpoints", "create"], { env: { ...reader, PATH: process.env.PATH ?? "" } }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 5, stderr: expect.stringContaining("forbidden") });

    const audit = JSON.parse(await cli("--json", "audit", "--action", "key.created")) as { items: { keyId: string; details: { name: string } }[] };
    expect(audit.items.map((e) => [e.keyId, e.details.name])).toEqual([[created.id, "ci-reader"]]);
    expect(await cli("audit", "--endpoint", "from-cli")).toMatch(/endpoint\.created/);
    // One event's history: its read, and nothing about the endpoint or another event.
    const sent = await fetch(endpoint.webhookUrl, { method: "POST", body: "{}" });
    const { id: eventId } = (await sent.json()) as { id: string };
    await cli("events", "get", "from-cli", eventId);
    const history = JSON.parse(await cli("--json", "audit", "--endpoint", "from-cli", "--event", eventId)) as { items: { action: string; eventId: string }[] };
    expect(history.items.map((e) => [e.action, e.eventId])).toEqual([["event.read", eventId]]);
    expect(await cliFailure("audit", "--event", eventId)).toMatchObject({ code: 1, stderr: expect.stringContaining("--event needs --endpoint") });

    await cli("keys", "revoke", scoped.id);
    const revoked = await run(process.execPath, [whc, "endpoints", "list"], { env: { ...reader, PATH: process.env.PATH ?? "" } }).catch((e: { code: number; stderr: string }) => e);
    expect(revoked).toMatchObject({ code: 3, stderr: expect.stringContaining("unauthorized") });
    expect(await cli("keys", "list")).toMatch(/ci-reader\s+whc_\S+…\s+endpoints:read,events:read\s+1\s+\S+\s+\S+\s+revoked/);
  });

  it("tails an endpoint: new captures appear live", async () => {
    const created = JSON.parse(await cli("--json", "keys", "create", "--account", "tailers")) as { key: string };
    env.WHC_API_KEY = created.key;
    const endpoint = JSON.parse(await cli("--json", "endpoints", "create")) as { id: string; webhookUrl: string };
    await fetch(endpoint.webhookUrl, { method: "POST", body: '{"type":"before.tail"}' });
    const tail = startNode(whc, { ...env }, ["--json", "events", "tail", endpoint.id]);
    try {
      await tail.waitForOutput(/before\.tail/);
      await new Promise((r) => setTimeout(r, 300));
      await fetch(`${endpoint.webhookUrl}/live`, { method: "PUT", body: '{"type":"during.tail"}' });
      await tail.waitForOutput(/during\.tail/, 5000);
      const lines = tail.output().trim().split("\n").map((l) => JSON.parse(l) as { canonicalEventType: string });
      expect(lines.map((l) => l.canonicalEventType)).toEqual(["before.tail", "during.tail"]);
      expect(await tail.stop("SIGINT")).toBe(0);
    } finally {
      await tail.stop("SIGKILL");
    }
  });

  it("tails an empty endpoint: the first capture after it started is printed; Ctrl-C exits 0", async () => {
    const endpoint = JSON.parse(await cli("--json", "endpoints", "create")) as { id: string; webhookUrl: string };
    const tail = startNode(whc, { ...env }, ["events", "tail", endpoint.id]);
    try {
      await tail.waitForOutput(/following /);
      await fetch(endpoint.webhookUrl, { method: "POST", body: '{"type":"first.capture"}' });
      await tail.waitForOutput(/first\.capture/, 5000);
      expect(tail.output()).toMatch(/POST +200 +unverified +first\.capture +\d+ B +[0-9a-f-]{36}/);
      expect(await tail.stop("SIGINT")).toBe(0);
    } finally {
      await tail.stop("SIGKILL");
    }
  });

  it("updates an endpoint by slug: --pause refuses captures (503), --resume accepts them again", async () => {
    await useNewKey("updaters");
    const created = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "to-pause")) as { id: string; webhookUrl: string };
    expect(await captureStatus(created.webhookUrl)).toBe(200);

    const paused = await cli("endpoints", "update", "to-pause", "--pause", "--name", "Paused one");
    expect(paused).toBe(`updated to-pause (${created.id})\n  name: Paused one\n  status: paused (captures are refused with 503)\n`);
    // Ingest sees the change within a second (design §9).
    await expect.poll(() => captureStatus(created.webhookUrl), { timeout: 5000, interval: 200 }).toBe(503);

    const resumed = JSON.parse(await cli("--json", "endpoints", "update", "to-pause", "--resume")) as { id: string; status: string; displayName: string };
    expect(resumed).toMatchObject({ id: created.id, status: "active", displayName: "Paused one" });
    await expect.poll(() => captureStatus(created.webhookUrl), { timeout: 5000, interval: 200 }).toBe(200);
  });

  it("sets what the endpoint answers with --response, and removes it with --no-response", async () => {
    await useNewKey("responders");
    const created = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "answers")) as { id: string; webhookUrl: string };
    const file = `${dir.path}/response.json`;
    writeFileSync(file, '{"status":202,"body":"taken"}');

    expect(await cli("endpoints", "update", "answers", "--response", '{"status":202}')).toContain('  response: {"status":202}');
    expect((JSON.parse(await cli("--json", "endpoints", "list")) as { slug: string; response?: unknown }[]).find((e) => e.slug === "answers")?.response).toEqual({ status: 202 });
    await expect.poll(() => captureStatus(created.webhookUrl), { timeout: 5000, interval: 200 }).toBe(202);

    const fromFile = JSON.parse(await cli("--json", "endpoints", "update", created.id, "--response", `@${file}`)) as { response?: unknown };
    expect(fromFile.response).toEqual({ status: 202, body: "taken" });

    const removed = JSON.parse(await cli("--json", "endpoints", "update", "answers", "--no-response")) as { response?: unknown };
    expect(removed.response).toBeUndefined();
    await expect.poll(() => captureStatus(created.webhookUrl), { timeout: 5000, interval: 200 }).toBe(200);
  });

  it("makes a relay endpoint with --forward-to, switches it to proxy, and removes forwarding with --no-forward", async () => {
    await useNewKey("forwarders");
    const seen: string[] = [];
    const app = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} #${String(req.headers["x-whc-attempt"])}`);
        res.writeHead(201, { "content-type": "text/plain" }).end("made");
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
    try {
      const created = await cli("endpoints", "create", "--slug", "relayed", "--forward-to", appUrl, "--forward-max-attempts", "3");
      expect(created).toContain(`relay to ${appUrl}`);
      const ep = (JSON.parse(await cli("--json", "endpoints", "list")) as { slug: string; webhookUrl: string; forward?: unknown }[]).find((e) => e.slug === "relayed")!;
      expect(ep.forward).toEqual({ url: appUrl, keepPath: true, timeoutMs: 10000, maxAttempts: 3, targetSecretSet: false });
      expect(await captureStatus(`${ep.webhookUrl}/ci?x=1`)).toBe(200);
      await waitFor(() => seen.length === 1 || undefined, { what: "the relayed capture" });
      expect(seen).toEqual(["POST /hooks/ci?x=1 #1"]);

      const proxied = await cli("endpoints", "update", "relayed", "--mode", "proxy", "--forward-to", appUrl, "--target-secret", "whsec_target", "--forward-timeout-ms", "2000");
      expect(proxied).toContain("  mode: proxy");
      expect(proxied).toContain(`  forward: ${appUrl} (keepPath true, timeout 2000 ms, 6 attempts, re-signed)`);
      // The sender now gets the destination's answer (ingest sees the change within a second).
      await expect.poll(() => captureStatus(ep.webhookUrl), { timeout: 5000, interval: 200 }).toBe(201);

      const orphan = await cliFailure("endpoints", "update", "relayed", "--target-secret", "x");
      expect(orphan.stderr).toContain("go with --forward-to");
      const refused = await cliFailure("endpoints", "update", "relayed", "--no-forward");
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("error: The request is not valid: forward (required) (validation_failed, request");
      const removed = JSON.parse(await cli("--json", "endpoints", "update", "relayed", "--no-forward", "--mode", "capture")) as { operatingMode: string; forward?: unknown };
      expect(removed).toMatchObject({ operatingMode: "capture" });
      expect(removed.forward).toBeUndefined();
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
  });

  it("manages a relay endpoint's destinations one at a time: add, update, test, remove (design §17)", async () => {
    await useNewKey("routers");
    const seen: string[] = [];
    const app = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(`${req.url} ${String(req.headers["x-env"] ?? "-")}`);
        res.end("ok");
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    try {
      await cli("endpoints", "create", "--slug", "routed", "--forward-to", `${appUrl}/all`);
      const transform = path.join(dir.path, "prod.js");
      writeFileSync(transform, "function transform(req) { req.headers['x-env'] = ['prod']; return req; }\n");
      const added = await cli("endpoints", "destinations", "add", "routed", "--url", `${appUrl}/paid`, "--name", "paid", "--filter", '{"eventType":"invoice.paid"}', "--transform", `@${transform}`);
      expect(added).toMatch(/added paid \([0-9a-f-]{36}\) to routed/);
      const listed = await cli("endpoints", "destinations", "list", "routed");
      expect(listed).toMatch(/destination-1\s+\S+\s+http:\/\/127\.0\.0\.1:\d+\/all\s+every capture/);
      expect(listed).toMatch(/paid\s+\S+\s+http:\/\/127\.0\.0\.1:\d+\/paid\s+\{"eventType":"invoice.paid"\}/);

      const ep = JSON.parse(await cli("--json", "endpoints", "get", "routed")) as { id: string; webhookUrl: string; destinations: { id: string; name: string; targetSecretSet: boolean }[] };
      const paid = (await (await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"invoice.paid"}' })).json()) as { id: string };
      await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"invoice.failed"}' });
      await waitFor(() => seen.length === 3 || undefined, { what: "three deliveries" });
      expect(seen.sort()).toEqual(["/all -", "/all -", "/paid prod"]);

      const tested = await cli("endpoints", "destinations", "test", "routed", paid.id, "--destination", "paid");
      expect(tested).toContain("matched; would send");
      expect(tested).toContain('"x-env": [\n      "prod"\n    ]');
      expect(await cli("endpoints", "destinations", "test", "routed", paid.id, "--filter", '{"eventType":"invoice.failed"}')).toContain("no match");
      const bad = await cliFailure("endpoints", "destinations", "test", "routed", paid.id, "--filter", '{"$where":"1"}');
      expect(bad.stderr).toContain("destination.filter.$where");

      const updated = JSON.parse(await cli("--json", "endpoints", "destinations", "update", "routed", "paid", "--no-filter", "--target-secret", "whsec_paid")) as { name: string; filter?: unknown; targetSecretSet: boolean }[];
      expect(updated.map((d) => [d.name, d.filter ?? null, d.targetSecretSet])).toEqual([
        ["destination-1", null, false],
        ["paid", null, true],
      ]);
      const refused = await cliFailure("endpoints", "destinations", "add", "routed", "--url", appUrl, "--filter", '{"a":{"$expr":1}}');
      // Checked here, before anything is sent.
      expect(refused.stderr).toContain("destination field filter.a.$expr: $expr is not a filter operator");
      expect(refused.stderr).toContain("(nothing was sent)");
      await cli("endpoints", "destinations", "remove", "routed", "destination-1");
      const left = JSON.parse(await cli("--json", "endpoints", "destinations", "list", "routed")) as { name: string; id: string }[];
      expect(left.map((d) => d.name)).toEqual(["paid"]);
      // The other destination kept its id and its secret through every change.
      expect(left[0]!.id).toBe(ep.destinations.find((d) => d.name === "paid")!.id);
      const last = await cliFailure("endpoints", "destinations", "remove", "routed", "paid");
      expect(last.stderr).toContain("forward (required)");
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
  });

  it("pauses and resumes one destination: held while paused (shown in the BREAKER column), drained oldest first once resumed (design §18)", async () => {
    await useNewKey("pausers");
    const seen: string[] = [];
    const app = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(String(req.headers["x-whc-delivery-id"]));
        res.end("ok");
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    try {
      await cli("endpoints", "create", "--slug", "pausable", "--forward-to", `${appUrl}/in`);
      expect(await cli("endpoints", "destinations", "list", "pausable")).toMatch(/destination-1\s+\S+\s+http:\S+\s+every capture\s+-\s+closed\s/);
      const paused = await cli("destinations", "pause", "pausable", "destination-1");
      expect(paused).toBe("paused destination-1 of pausable: closed, paused\n");

      const ep = JSON.parse(await cli("--json", "endpoints", "get", "pausable")) as { webhookUrl: string };
      const ids: string[] = [];
      for (const n of [1, 2, 3]) ids.push(((await (await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${n}}` })).json()) as { id: string }).id);
      await waitFor(async () => (/3 held/.test(await cli("destinations", "list", "pausable")) ? true : undefined), { what: "3 held" });
      expect(seen).toEqual([]);
      const listed = JSON.parse(await cli("--json", "destinations", "list", "pausable")) as { paused: boolean; breaker: { state: string; held: number } }[];
      expect(listed).toMatchObject([{ paused: true, breaker: { state: "closed", held: 3 } }]);

      expect(await cli("endpoints", "destinations", "resume", "pausable", "destination-1")).toMatch(/^resumed destination-1 of pausable: closed/);
      await waitFor(() => (seen.length === 3 ? true : undefined), { what: "the drain" });
      expect(seen).toEqual(ids);
      const missing = await cliFailure("destinations", "pause", "pausable", "nope");
      expect(missing.stderr).toContain('pausable has no destination with the id or name "nope"');
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
    // Ten runs of the CLI, each a process start.
  });

  it("sets redaction with repeatable --redact-* flags, shows it and its counts, refuses a bad pattern before sending, removes it with --no-redact", async () => {
    await useNewKey("redactors");
    const created = await cli(
      "endpoints", "create", "--slug", "redacted",
      "--redact-header", "authorization", "--redact-header", "x-api-key",
      "--redact-json-path", "$.card.number",
      "--redact-pattern", "\\b\\d{13,19}\\b",
    );
    expect(created).toContain("redacts headers authorization, x-api-key; JSON paths $.card.number; patterns \\b\\d{13,19}\\b");
    const ep = JSON.parse(await cli("--json", "endpoints", "get", "redacted")) as { id: string; webhookUrl: string; redact?: unknown };
    expect(ep.redact).toEqual({ headers: ["authorization", "x-api-key"], jsonPaths: ["$.card.number"], patterns: ["\\b\\d{13,19}\\b"] });

    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { authorization: "Bearer t" }, body: '{"card":{"number":"4242424242424242"},"note":"5555555555554444"}' });
    const { id } = (await res.json()) as { id: string };
    const shown = await cli("events", "get", "redacted", id);
    expect(shown).toMatch(/redacted\s+1 header value\(s\), 1 JSON value\(s\), 1 pattern match\(es\)/);
    expect(shown).toContain("authorization: [redacted]");
    expect(await cli("events", "get", "redacted", id, "--body")).toBe('{"card":{"number":"[redacted]"},"note":"[redacted]"}');

    const bad = await cliFailure("endpoints", "update", "redacted", "--redact-pattern", "(a+)+$");
    expect(bad.stderr).toContain('--redact-pattern "(a+)+$": every repetition needs an upper bound');
    const replaced = await cli("endpoints", "update", "redacted", "--redact-json-path", "$.items[*].pan");
    expect(replaced).toContain("  redact: JSON paths $.items[*].pan");
    const removed = JSON.parse(await cli("--json", "endpoints", "update", "redacted", "--no-redact")) as { redact?: unknown };
    expect(removed.redact).toBeUndefined();
  });

  it("sets dedupe with --dedupe and --dedupe-window, shows it, lists duplicates with --duplicate, changes and removes it", async () => {
    await useNewKey("dedupers");
    const created = await cli("endpoints", "create", "--slug", "deduped", "--provider", "stripe", "--dedupe", "auto", "--dedupe-window", "10m");
    expect(created).toContain("deduplicates on the provider's own id (auto), window 10m");
    const ep = JSON.parse(await cli("--json", "endpoints", "get", "deduped")) as { id: string; webhookUrl: string; dedupe?: unknown };
    expect(ep.dedupe).toEqual({ windowSeconds: 600, key: "auto" });
    expect(await cli("endpoints", "get", "deduped")).toMatch(/dedupe\s+on the provider's own id \(auto\), window 10m/);
    const event = JSON.stringify({ id: "evt_cli_1", object: "event", type: "invoice.paid", data: { object: {} } });
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: event });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const duplicates = (await cli("events", "list", "deduped", "--duplicate")).trim().split("\n").slice(1);
    expect(duplicates).toHaveLength(1);
    expect(duplicates[0]).toContain(`${ids[1]} (duplicate of ${ids[0]})`);
    const originals = JSON.parse(await cli("--json", "events", "list", "deduped", "--no-duplicate")) as { items: { id: string }[] };
    expect(originals.items.map((e) => e.id)).toEqual([ids[0]]);
    expect(await cli("events", "get", "deduped", ids[1]!)).toMatch(new RegExp(`duplicate of\\s+${ids[0]} \\(stored and answered, not forwarded\\)`));

    // A key alone keeps the window; a window alone keeps the key.
    expect(await cli("endpoints", "update", "deduped", "--dedupe", "header.x-request-id,body.id")).toContain("  dedupe: on header.x-request-id, body.id, window 10m");
    expect(await cli("endpoints", "update", "deduped", "--dedupe-window", "2d")).toContain("  dedupe: on header.x-request-id, body.id, window 2d");
    const badWindow = await cliFailure("endpoints", "update", "deduped", "--dedupe-window", "31d");
    expect(badWindow.stderr).toContain("--dedupe-window");
    const badField = await cliFailure("endpoints", "update", "deduped", "--dedupe", "id");
    expect(badField.stderr).toContain("--dedupe: fields.0");
    const removed = JSON.parse(await cli("--json", "endpoints", "update", "deduped", "--no-dedupe")) as { dedupe?: unknown };
    expect(removed.dedupe).toBeUndefined();
    expect((await cliFailure("endpoints", "update", "deduped", "--dedupe-window", "1h")).stderr).toContain("--dedupe-window goes with --dedupe");
  });

  it("refuses a bad --response before sending anything, naming the field", async () => {
    // The API it would use records every request: there must be none.
    const requests: string[] = [];
    const recorder = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => recorder.listen(0, "127.0.0.1", r));
    const saved = { ...env };
    env.WHC_API_URL = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    env.WHC_API_KEY = `whc_${"r".repeat(40)}`;
    try {
      const badRule = await cliFailure("endpoints", "update", "some-slug", "--response", '{"rules":[{"match":{"method":"POST"},"status":99}]}');
      expect(badRule.code).toBe(1);
      expect(badRule.stderr).toMatch(/^error: --response field rules\.0\.status: .*>=200/);
      const unknownKey = await cliFailure("endpoints", "update", "some-slug", "--response", '{"stauts":202}');
      expect(unknownKey).toMatchObject({ code: 1, stderr: expect.stringContaining("--response field stauts: ") });
      const notJson = await cliFailure("endpoints", "update", "some-slug", "--response", "{status:202}");
      expect(notJson).toMatchObject({ code: 1, stderr: expect.stringContaining("--response: not JSON") });
      expect(requests).toEqual([]);
    } finally {
      Object.assign(env, saved);
      recorder.close();
    }
  });

  it("rotates and removes the secret, and deletes by slug", async () => {
    await useNewKey("rotators");
    const created = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "rotating", "--secret", "first-secret")) as { id: string };
    const rotated = JSON.parse(await cli("--json", "endpoints", "update", "rotating", "--secret", "second-secret", "--replay-from-api", "false")) as {
      secretSet: boolean;
      secretRotatedAt?: string;
      replayFromApi: boolean;
    };
    expect(rotated).toMatchObject({ secretSet: true, replayFromApi: false, secretRotatedAt: expect.any(String) });
    expect(await cli("endpoints", "update", "rotating", "--remove-secret")).toContain("  secret: removed");

    const missing = await cliFailure("endpoints", "update", "no-such-endpoint", "--pause");
    expect(missing).toMatchObject({ code: 2, stderr: 'error: no endpoint with the id or slug "no-such-endpoint" in this account\n' });
    expect(await cli("endpoints", "delete", "rotating")).toBe(`deleted rotating (${created.id}) and its events\n`);
    expect(await cli("endpoints", "list")).not.toContain("rotating");
  });

  it("protects an endpoint's URL with --basic-auth, --header-token, --allow-ip and --method, changes one part at a time, and removes it", async () => {
    await useNewKey("guarded");
    const created = JSON.parse(
      await cli("--json", "endpoints", "create", "--slug", "guarded", "--basic-auth", "hooks:s3cret:with-colon", "--method", "post", "--method", "PUT"),
    ) as { webhookUrl: string; inbound: unknown };
    expect(created.inbound).toEqual({ basicAuth: { username: "hooks", passwordSet: true }, methods: ["POST", "PUT"] });
    const auth = { authorization: `Basic ${Buffer.from("hooks:s3cret:with-colon").toString("base64")}` };
    expect((await fetch(created.webhookUrl, { method: "POST", body: "{}" })).status).toBe(401);
    expect((await fetch(created.webhookUrl, { method: "POST", headers: auth, body: "{}" })).status).toBe(200);

    // One part changes; the password is kept.
    const updated = await cli("endpoints", "update", "guarded", "--header-token", "X-Hook-Token:tok-1", "--allow-ip", "127.0.0.1");
    // The refusal above reaches rejectedCount within a second: 0 or 1 by now.
    expect(updated).toMatch(/ {2}inbound: basic auth as hooks; header X-Hook-Token; from 127\.0\.0\.1; methods POST, PUT \([01] refused\)/);
    expect((await fetch(created.webhookUrl, { method: "PUT", headers: { ...auth, "x-hook-token": "tok-1" }, body: "{}" })).status).toBe(200);
    expect((await fetch(created.webhookUrl, { method: "PUT", headers: auth, body: "{}" })).status).toBe(401);
    expect(await cli("endpoints", "get", "guarded")).toMatch(/inbound\s+basic auth as hooks; header X-Hook-Token; from 127\.0\.0\.1; methods POST, PUT/);

    const refused = await cliFailure("endpoints", "update", "guarded", "--allow-ip", "not-an-ip");
    expect(refused.stderr).toContain("inbound.allowIps.0");
    expect(await cli("endpoints", "update", "guarded", "--no-inbound")).toContain("  inbound: anyone may send");
    expect((await fetch(created.webhookUrl, { method: "GET" })).status).toBe(200);
  });

  it("lists every endpoint over as many pages as it takes, and finds one by slug or id past the first page", async () => {
    await useNewKey("many-endpoints");
    // Made in the catalog beside the server (as `whc keys` reaches it), not one API call each;
    // imported here as keys.ts imports the store: only when needed.
    const [{ openSqliteStore }, { endpointFixture }] = await Promise.all([import("@whc/catalog-sqlite"), import("@whc/catalog-core/testing")]);
    const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
    const ids: string[] = [];
    try {
      const { accountId } = (await store.findApiKeyByHash(hashApiKey(env.WHC_API_KEY!)))!;
      for (let i = 0; i < 520; i += 1) ids.push((await store.createEndpoint(endpointFixture(accountId, { slug: `bulk-${i}` }))).id);
    } finally {
      await store.close();
    }
    const listed = JSON.parse(await cli("--json", "endpoints", "list")) as { id: string }[];
    expect(listed.map((e) => e.id)).toEqual([...ids].sort());
    expect((await cli("endpoints", "list")).split("\n").filter((l) => l.includes("bulk-"))).toHaveLength(520);
    // The last ones sit on the second page of 500: found by slug and by id in every command.
    expect((JSON.parse(await cli("--json", "endpoints", "get", "bulk-519")) as { id: string }).id).toBe(ids[519]);
    expect((JSON.parse(await cli("--json", "endpoints", "get", ids[510]!)) as { slug: string }).slug).toBe("bulk-510");
    expect(await cli("endpoints", "update", "bulk-515", "--pause")).toContain("updated bulk-515");
    expect(JSON.parse(await cli("events", "list", "bulk-518", "--json"))).toEqual({ items: [] });
    expect((await cliFailure("endpoints", "get", "bulk-520")).code).toBe(2);
  });

  it("reports API errors with their code and request id", async () => {
    env.WHC_API_KEY = `whc_${"z".repeat(40)}`;
    await expect(cli("endpoints", "list")).rejects.toMatchObject({
      stderr: expect.stringMatching(/A valid API key is required\. \(unauthorized, request [0-9a-f-]{36}\)/),
    });
  });
});
