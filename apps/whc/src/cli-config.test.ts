import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import Stripe from "stripe";
import type { AlertChannelJson, AuditListJson, EndpointJson, EventListJson } from "@whc/api-model";
import { buildApps, startAllInOne, tempDir, type AllInOne } from "@whc/testing";

/**
 * `whc apply` and `whc export-config` against a real all-in-one process, as a platform team
 * runs them from CI: the plan printed, secrets from the environment, idempotent, --dry-run,
 * --prune, the export applied back (to the same account and to another one), and bad files.
 */

let server: AllInOne;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let apiUrl: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** whc with `env` (the key, the secrets' variables) and, for `-f -`, `input` on stdin. */
function cli(env: Record<string, string>, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [whc, ...args], { env: { PATH: process.env.PATH ?? "", WHC_API_URL: apiUrl, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/** The accounts the cases use, one each, made at start-up: each case starts from an empty account. */
const ACCOUNTS = ["create", "update", "prune", "alerts", "export", "copy", "refusals", "alerts-cli", "protect", "routing", "dedupe"] as const;
const KEYS = Object.fromEntries(ACCOUNTS.map((a, i) => [a, `whc_configascode${String(i).padStart(2, "0")}${"x".repeat(24)}`]));
const account = (name: (typeof ACCOUNTS)[number]) => ({ WHC_API_KEY: KEYS[name]! });

function file(name: string, text: string): string {
  const at = path.join(dir.path, name);
  writeFileSync(at, text);
  return at;
}

async function api<T>(key: Record<string, string>, pathname: string): Promise<T> {
  const res = await fetch(`${apiUrl}${pathname}`, { headers: { authorization: `Bearer ${key.WHC_API_KEY}` } });
  expect(res.status, pathname).toBe(200);
  return (await res.json()) as T;
}

const endpointsOf = async (key: Record<string, string>) => (await api<{ items: EndpointJson[] }>(key, "/v1/endpoints")).items;
const bySlug = (items: EndpointJson[], slug: string) => items.find((e) => e.slug === slug);

const STRIPE_SECRET = "whsec_from_the_environment_1234";
const SECRETS = { STRIPE_SECRET, ORDERS_TARGET_SECRET: "target-secret-from-the-environment" };

const PAGER_SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;

const channelsOf = async (key: Record<string, string>) => (await api<{ items: AlertChannelJson[] }>(key, "/v1/alert-channels")).items;

const WEBHOOKS = `# the team's webhooks
endpoints:
  - slug: stripe
    provider: stripe
    secretFromEnv: STRIPE_SECRET
    response:
      status: 202
      headers: { x-team: payments }
  - slug: orders
    displayName: Orders relay
    operatingMode: relay
    forward:
      url: http://127.0.0.1:9/hooks
      keepPath: false
      targetSecretFromEnv: ORDERS_TARGET_SECRET
  - slug: plain
`;

const WITH_CHANNELS = `${WEBHOOKS}alertChannels:
  - name: ops
    type: slack
    url: http://127.0.0.1:9/services/T0/B0/x
    events: [delivery.exhausted, destination.opened]
    endpoints: [orders]
  - name: pager
    type: webhook
    url: http://127.0.0.1:9/pager
    events: [delivery.exhausted]
    secretFromEnv: PAGER_SECRET
`;

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-config-");
  server = await startAllInOne(mains["all-in-one"]!, path.join(dir.path, "data"), {
    // The relay's destination is on loopback.
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_BOOTSTRAP_API_KEYS: ACCOUNTS.map((a) => `${a}:${KEYS[a]}`).join(","),
  });
  apiUrl = server.gatewayUrl;
});

afterAll(async () => {
  await server?.proc.stop();
  dir?.remove();
});

describe("whc apply", () => {
  it("creates what the file names, with secrets from the environment; a second run changes nothing", async () => {
    const key = account("create");
    const webhooks = file("create.yaml", WEBHOOKS);
    const first = await cli({ ...key, ...SECRETS }, ["apply", "-f", webhooks]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe("+ create endpoint stripe\n+ create endpoint orders\n+ create endpoint plain\n");

    const items = await endpointsOf(key);
    expect(items.map((e) => e.slug)).toEqual(["stripe", "orders", "plain"]);
    expect(bySlug(items, "stripe")).toMatchObject({ provider: "stripe", secretSet: true, response: { status: 202, headers: { "x-team": "payments" } } });
    expect(bySlug(items, "orders")).toMatchObject({
      displayName: "Orders relay",
      operatingMode: "relay",
      forward: { url: "http://127.0.0.1:9/hooks", keepPath: false, timeoutMs: 10_000, maxAttempts: 6, targetSecretSet: true },
    });
    expect(bySlug(items, "plain")).toMatchObject({ displayName: "plain", operatingMode: "capture", provider: "generic", secretSet: false });

    // The secret is the variable's value: a capture Stripe signs with it verifies.
    const payload = '{"id":"evt_1","type":"invoice.paid"}';
    const signature = new Stripe("sk_test_x").webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
    const capture = await fetch(bySlug(items, "stripe")!.webhookUrl, { method: "POST", headers: { "stripe-signature": signature, "content-type": "application/json" }, body: payload });
    expect(capture.status).toBe(202);
    const events = await api<EventListJson>(key, `/v1/endpoints/${bySlug(items, "stripe")!.id}/events`);
    expect(events.items[0]?.verification).toBe("verified");

    const second = await cli({ ...key, ...SECRETS }, ["apply", "-f", webhooks]);
    expect(second).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });
    expect(await endpointsOf(key)).toEqual(items.map((e) => (e.slug === "stripe" ? { ...e, eventCount: 1, lastEventAt: expect.any(String) } : e)));

    // One config.applied entry for the run that changed something (design §15), naming the file by its hash.
    const applied = (await api<AuditListJson>(key, "/v1/audit?action=config.applied")).items;
    expect(applied).toHaveLength(1);
    expect(applied[0]!.details).toEqual({
      sha256: createHash("sha256").update(readFileSync(webhooks)).digest("hex"),
      total: 3,
      applied: 3,
      complete: true,
      created: { count: 3, slugs: ["stripe", "orders", "plain"] },
      updated: { count: 0, slugs: [] },
      deleted: { count: 0, slugs: [] },
    });
  });

  it("names the fields an edit changes, changes nothing with --dry-run, and applies it without", async () => {
    const key = account("update");
    expect((await cli({ ...key, ...SECRETS }, ["apply", "-f", file("before.yaml", WEBHOOKS)])).code).toBe(0);
    const before = await endpointsOf(key);
    // Renamed, one attempt fewer, no configured answer, paused.
    const edited = WEBHOOKS.replace("displayName: Orders relay", "displayName: Orders\n    status: paused")
      .replace("keepPath: false", "keepPath: false\n      maxAttempts: 5")
      .replace(/ {4}response:\n.*\n.*\n/, "");
    const after = file("after.yaml", edited);

    const dry = await cli({ ...key, ...SECRETS }, ["apply", "-f", after, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe("~ update endpoint stripe: response\n~ update endpoint orders: displayName, status, forward\n");
    expect(dry.stderr).toContain("dry run: nothing was changed");
    expect(await endpointsOf(key)).toEqual(before);

    const applied = await cli({ ...key, ...SECRETS }, ["--json", "apply", "-f", after]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toEqual({
      dryRun: false,
      changes: [
        { action: "update", slug: "stripe", fields: ["response"] },
        { action: "update", slug: "orders", fields: ["displayName", "status", "forward"] },
      ],
      applied: 2,
      kept: [],
      alertChannelsKept: [],
    });
    const items = await endpointsOf(key);
    expect("response" in bySlug(items, "stripe")!).toBe(false);
    // The secrets set before are kept: the forward settings were sent without the target secret.
    expect(bySlug(items, "stripe")!.secretSet).toBe(true);
    expect(bySlug(items, "orders")).toMatchObject({ displayName: "Orders", status: "paused", forward: { maxAttempts: 5, targetSecretSet: true } });
    expect((await cli({ ...key, ...SECRETS }, ["apply", "-f", after])).stdout).toBe("no changes\n");
  });

  it("manages redaction and inbound protection: the password from the environment, set once; parts compared, the secret never", async () => {
    const key = account("protect");
    const text = (methods: string) => `endpoints:
  - slug: guarded
    redact:
      headers: [authorization]
      jsonPaths: [$.card.number]
    inbound:
      basicAuth: { username: stripe, passwordFromEnv: GUARD_PASSWORD }
      methods: [${methods}]
`;
    const guarded = file("protect.yaml", text("POST"));
    const env = { ...key, GUARD_PASSWORD: "open-sesame" };
    const first = await cli(env, ["apply", "-f", guarded]);
    expect(first.code, first.stderr).toBe(0);
    const [ep] = await endpointsOf(key);
    expect(ep).toMatchObject({
      redact: { headers: ["authorization"], jsonPaths: ["$.card.number"] },
      inbound: { basicAuth: { username: "stripe", passwordSet: true }, methods: ["POST"] },
    });
    // The password is the variable's: a sender with it is stored (redacted), one without is refused.
    const basic = `Basic ${Buffer.from("stripe:open-sesame").toString("base64")}`;
    const body = JSON.stringify({ card: { number: "4242424242424242" } });
    expect((await fetch(ep!.webhookUrl, { method: "POST", headers: { authorization: basic, "content-type": "application/json" }, body })).status).toBe(200);
    expect((await fetch(ep!.webhookUrl, { method: "POST", body })).status).toBe(401);

    expect(await cli({ ...key, GUARD_PASSWORD: "another" }, ["apply", "-f", guarded])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });
    const edited = await cli(env, ["apply", "-f", file("protect2.yaml", text("POST, PUT"))]);
    expect(edited.stdout).toBe("~ update endpoint guarded: inbound\n");
    expect((await endpointsOf(key))[0]).toMatchObject({ inbound: { basicAuth: { username: "stripe", passwordSet: true }, methods: ["POST", "PUT"] } });
    expect((await fetch(ep!.webhookUrl, { method: "PUT", headers: { authorization: basic }, body })).status).toBe(200);

    const exported = await cli(key, ["export-config"]);
    expect(exported.stdout).toContain("inbound basic auth password set, not exported");
    expect(await cli(key, ["apply", "-f", file("protect3.yaml", exported.stdout)])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });
  });

  it("manages dedupe (design §17): set, compared, changed, removed, exported and applied back; refused on a proxy endpoint", async () => {
    const key = account("dedupe");
    const text = (dedupe: string) => `endpoints:
  - slug: payments
    provider: stripe
${dedupe}`;
    const first = await cli(key, ["apply", "-f", file("dedupe.yaml", text("    dedupe: { windowSeconds: 3600, key: auto }\n"))]);
    expect(first, first.stderr).toMatchObject({ code: 0, stdout: "+ create endpoint payments\n" });
    expect((await endpointsOf(key))[0]!.dedupe).toEqual({ windowSeconds: 3600, key: "auto" });
    expect(await cli(key, ["apply", "-f", path.join(dir.path, "dedupe.yaml")])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    const fields = "    dedupe:\n      windowSeconds: 600\n      fields: [header.x-request-id, body.id]\n";
    expect((await cli(key, ["apply", "-f", file("dedupe2.yaml", text(fields))])).stdout).toBe("~ update endpoint payments: dedupe\n");
    expect((await endpointsOf(key))[0]!.dedupe).toEqual({ windowSeconds: 600, fields: ["header.x-request-id", "body.id"] });
    const exported = await cli(key, ["export-config"]);
    expect(exported.stdout).toContain("dedupe:");
    expect(await cli(key, ["apply", "-f", file("dedupe3.yaml", exported.stdout)])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    expect((await cli(key, ["apply", "-f", file("dedupe4.yaml", text(""))])).stdout).toBe("~ update endpoint payments: dedupe\n");
    expect((await endpointsOf(key))[0]!.dedupe).toBeUndefined();

    const proxy = await cli(key, ["apply", "-f", file("dedupe5.yaml", text("    operatingMode: proxy\n    forward: { url: http://127.0.0.1:9/ }\n    dedupe: { windowSeconds: 60, key: auto }\n"))]);
    expect(proxy).toMatchObject({ code: 1, stdout: "" });
    expect(proxy.stderr).toMatch(/dedupe5\.yaml:\d+:\d+: endpoints\.0\.dedupe: a proxy endpoint forwards every capture/);
  });

  it("keeps endpoints the file does not name, and deletes them with --prune", async () => {
    const key = account("prune");
    expect((await cli({ ...key, ...SECRETS }, ["apply", "-f", file("prune.yaml", WEBHOOKS)])).code).toBe(0);
    expect((await cli(key, ["endpoints", "create", "--slug", "by-hand"])).code).toBe(0);

    const kept = await cli({ ...key, ...SECRETS }, ["apply", "-f", path.join(dir.path, "prune.yaml")]);
    expect(kept.stdout).toBe("no changes\n");
    expect(kept.stderr).toContain("kept, not in the file (--prune deletes them): by-hand");

    const dry = await cli({ ...key, ...SECRETS }, ["apply", "-f", path.join(dir.path, "prune.yaml"), "--prune", "--dry-run"]);
    expect(dry.stdout).toBe("- delete endpoint by-hand\n");
    expect(bySlug(await endpointsOf(key), "by-hand")).toBeDefined();

    const pruned = await cli({ ...key, ...SECRETS }, ["apply", "-f", path.join(dir.path, "prune.yaml"), "--prune"]);
    expect(pruned).toMatchObject({ code: 0, stdout: "- delete endpoint by-hand\n" });
    expect((await endpointsOf(key)).map((e) => e.slug)).toEqual(["stripe", "orders", "plain"]);
  });

  it("makes the account's alert channels match the file by name: created, replaced when they differ, kept or pruned", async () => {
    const key = account("alerts");
    const env = { ...key, ...SECRETS, PAGER_SECRET };
    const first = await cli(env, ["apply", "-f", file("alerts.yaml", WITH_CHANNELS)]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(
      "+ create endpoint stripe\n+ create endpoint orders\n+ create endpoint plain\n+ create alert channel ops\n+ create alert channel pager\n",
    );
    expect(first.stderr).toBe("");
    const orders = bySlug(await endpointsOf(key), "orders")!;
    const channels = await channelsOf(key);
    expect(channels.map((c) => [c.name, c.type, c.events, c.endpointIds, c.secretSet])).toEqual([
      ["ops", "slack", ["delivery.exhausted", "destination.opened"], [orders.id], false],
      ["pager", "webhook", ["delivery.exhausted"], [], true],
    ]);
    expect(await cli(env, ["apply", "-f", path.join(dir.path, "alerts.yaml")])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    // The file's events change: the channel is replaced (a new id), its name kept.
    const edited = file("alerts-edited.yaml", WITH_CHANNELS.replace("[delivery.exhausted, destination.opened]", "[signature.failed]"));
    expect((await cli(env, ["apply", "-f", edited])).stdout).toBe("~ replace alert channel ops: events\n");
    const replaced = (await channelsOf(key)).find((c) => c.name === "ops")!;
    expect([replaced.events, replaced.id === channels[0]!.id]).toEqual([["signature.failed"], false]);

    // One made by hand is kept, then pruned; one the file gives no secret gets a generated one, said once on stderr.
    expect((await cli(key, ["alerts", "create", "--name", "by-hand", "--type", "slack", "--url", "http://127.0.0.1:9/x", "--event", "test"])).code).toBe(0);
    const kept = await cli(env, ["apply", "-f", edited]);
    expect(kept).toMatchObject({ code: 0, stdout: "no changes\n" });
    expect(kept.stderr).toContain("alert channels kept, not in the file (--prune deletes them): by-hand");
    const unsigned = file("alerts-unsigned.yaml", `${WEBHOOKS}alertChannels:\n  - name: unsigned\n    type: webhook\n    url: http://127.0.0.1:9/u\n    events: [test]\n`);
    const pruned = await cli(env, ["apply", "-f", unsigned, "--prune"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    // Oldest first: ops was made again when it was replaced.
    expect(pruned.stdout).toBe("+ create alert channel unsigned\n- delete alert channel pager\n- delete alert channel ops\n- delete alert channel by-hand\n");
    expect(pruned.stderr).toMatch(/^alert channel unsigned: secret whsec_[A-Za-z0-9+/=]{44} \(shown this once/m);
    expect((await channelsOf(key)).map((c) => c.name)).toEqual(["unsigned"]);

    const unknownEndpoint = await cli(env, ["apply", "-f", file("alerts-bad.yaml", WITH_CHANNELS.replace("[orders]", "[nowhere]"))]);
    expect(unknownEndpoint.code).toBe(1);
    expect(unknownEndpoint.stderr).toMatch(/alerts-bad\.yaml:\d+:\d+: alertChannels\.0\.endpoints\.0: no endpoint nowhere in this file/);
  });
});

describe("whc apply with destinations (design §17)", () => {
  const ROUTED = `endpoints:
  - slug: fanout
    operatingMode: relay
    destinations:
      - name: billing
        url: http://127.0.0.1:9/billing
        filter: { eventType: { $regex: "^invoice\\\\." } }
        targetSecretFromEnv: BILLING_TARGET_SECRET
        breaker: { failures: 3 }
      - name: audit
        url: http://127.0.0.1:9/audit
        keepPath: false
        transform: |
          function transform(req) { return { ...req, headers: { ...req.headers, "x-audit": ["1"] } }; }
        rateLimit: { perSecond: 5 }
        paused: true
`;
  const env = { BILLING_TARGET_SECRET: "billing-target-secret-from-the-environment" };
  type Routed = EndpointJson & { destinations: NonNullable<EndpointJson["destinations"]> };

  it("creates them, matches them by name on later runs (ids and secrets kept), and exports them back as no changes", async () => {
    const key = account("routing");
    const first = await cli({ ...key, ...env }, ["apply", "-f", file("routed.yaml", ROUTED)]);
    expect(first, first.stderr).toMatchObject({ code: 0, stdout: "+ create endpoint fanout\n" });
    const [created] = (await endpointsOf(key)) as Routed[];
    expect(created!.destinations).toEqual([
      expect.objectContaining({
        name: "billing",
        url: "http://127.0.0.1:9/billing",
        targetSecretSet: true,
        filter: { eventType: { $regex: "^invoice\\." } },
        // Its settings (the defaults filled in) with where it stands; the file compares the settings only.
        breaker: expect.objectContaining({ failures: 3, probeAfterMs: 30_000, state: "closed" }),
        paused: false,
      }),
      expect.objectContaining({ name: "audit", keepPath: false, targetSecretSet: false, rateLimit: { perSecond: 5 }, paused: true, transform: expect.stringContaining("x-audit") }),
    ]);
    // forward mirrors the first destination.
    expect(created!.forward).toMatchObject({ url: "http://127.0.0.1:9/billing", targetSecretSet: true });
    expect(await cli({ ...key, ...env }, ["apply", "-f", path.join(dir.path, "routed.yaml")])).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    // billing loses its filter, audit moves first, archive is new: one update, the kept destinations under their ids.
    const edited = `endpoints:
  - slug: fanout
    operatingMode: relay
    destinations:
      - name: audit
        url: http://127.0.0.1:9/audit
        keepPath: false
        transform: |
          function transform(req) { return { ...req, headers: { ...req.headers, "x-audit": ["1"] } }; }
        rateLimit: { perSecond: 5 }
        paused: true
      - name: billing
        url: http://127.0.0.1:9/billing
        targetSecretFromEnv: BILLING_TARGET_SECRET
      - name: archive
        url: http://127.0.0.1:9/archive
`;
    const update = await cli({ ...key, ...env }, ["apply", "-f", file("edited.yaml", edited)]);
    expect(update, update.stderr).toMatchObject({ code: 0, stdout: "~ update endpoint fanout: destinations\n" });
    const [updated] = (await endpointsOf(key)) as Routed[];
    const idOf = (e: Routed, name: string) => e.destinations.find((d) => d.name === name)?.id;
    expect(updated!.destinations.map((d) => d.name)).toEqual(["audit", "billing", "archive"]);
    expect(idOf(updated!, "billing")).toBe(idOf(created!, "billing"));
    expect(idOf(updated!, "audit")).toBe(idOf(created!, "audit"));
    expect(updated!.destinations[1]).not.toHaveProperty("filter");
    // The secret was not sent again (it is set), and is kept.
    expect(updated!.destinations[1]!.targetSecretSet).toBe(true);
    expect((await cli({ ...key, ...env }, ["apply", "-f", path.join(dir.path, "edited.yaml")])).stdout).toBe("no changes\n");

    // The export writes destinations (not forward), names the set secret, and applies as no changes.
    const exported = await cli(key, ["export-config"]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).not.toContain(env.BILLING_TARGET_SECRET);
    expect(exported.stdout).toContain("destination billing: target secret set, not exported");
    expect(exported.stdout).toMatch(/^ {4}destinations:\n {6}- name: audit\n/m);
    expect(exported.stdout).not.toContain("forward:");
    expect(await cli(key, ["apply", "-f", "-"], exported.stdout)).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    // Back to part two's forward: one destination left, the first's name kept.
    const single = "endpoints:\n  - slug: fanout\n    operatingMode: relay\n    forward: { url: 'http://127.0.0.1:9/only' }\n";
    const back = await cli(key, ["apply", "-f", file("single.yaml", single)]);
    expect(back, back.stderr).toMatchObject({ code: 0, stdout: "~ update endpoint fanout: destinations\n" });
    const [one] = (await endpointsOf(key)) as Routed[];
    expect(one!.destinations).toEqual([expect.objectContaining({ id: idOf(updated!, "audit"), name: "audit", url: "http://127.0.0.1:9/only", paused: false })]);
    expect(one!.destinations[0]).not.toHaveProperty("transform");
    expect((await cli(key, ["apply", "-f", path.join(dir.path, "single.yaml")])).stdout).toBe("no changes\n");
  });
});

describe("whc export-config", () => {
  it("writes the account as a file that applies as no changes, to it and to another account alike, without secrets", async () => {
    const key = account("export");
    expect((await cli({ ...key, ...SECRETS, PAGER_SECRET }, ["apply", "-f", file("export.yaml", WITH_CHANNELS)])).code).toBe(0);
    const exported = await cli(key, ["export-config"]);
    expect(exported.code, exported.stderr).toBe(0);
    for (const secret of [...Object.values(SECRETS), PAGER_SECRET]) expect(exported.stdout).not.toContain(secret);
    expect(exported.stdout).toContain("secret set, not exported");
    expect(exported.stdout).toContain("alertChannels:\n  - name: ops\n    type: slack\n    url: http://127.0.0.1:9/services/T0/B0/x\n    events:\n      - delivery.exhausted\n      - destination.opened\n    endpoints:\n      - orders\n");

    expect(await cli(key, ["apply", "-f", "-"], exported.stdout)).toEqual({ code: 0, stdout: "no changes\n", stderr: "" });

    // Another account made from the export has the same endpoints (secrets aside), and exports the same file but the notes.
    const copy = account("copy");
    const created = await cli(copy, ["apply", "-f", "-"], exported.stdout);
    expect(created.stdout).toBe("+ create endpoint stripe\n+ create endpoint orders\n+ create endpoint plain\n+ create alert channel ops\n+ create alert channel pager\n");
    // The export names no secret: the copy's webhook channel gets a new one, said once.
    expect(created.stderr).toMatch(/^alert channel pager: secret whsec_/m);
    const again = await cli(copy, ["export-config"]);
    const withoutNotes = (text: string) => text.replace(/^ *# .*secret set, not exported.*\n/gm, "");
    expect(withoutNotes(again.stdout)).toBe(withoutNotes(exported.stdout));
  });
});

describe("whc apply against a key's request rate", () => {
  let slow: AllInOne | undefined;
  afterAll(async () => {
    await slow?.proc.stop();
  });

  it("waits out 429 quota_exceeded and applies every change", async () => {
    // One request a second, two at once: the list and the first create pass, the rest wait.
    slow = await startAllInOne(path.join(path.dirname(whc), "..", "all-in-one", "main.js"), path.join(dir.path, "slow"), {
      WHC_QUOTA_API_RPS: "1",
      WHC_BOOTSTRAP_API_KEYS: `slow:${KEYS.refusals}`,
    });
    const many = `endpoints:\n${["a", "b", "c", "d"].map((s) => `  - slug: ${s}\n`).join("")}`;
    const run = await cli({ WHC_API_URL: slow.gatewayUrl, WHC_API_KEY: KEYS.refusals! }, ["apply", "-f", file("many.yaml", many)]);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: "+ create endpoint a\n+ create endpoint b\n+ create endpoint c\n+ create endpoint d\n" });
  });
});

describe("whc apply refuses, changing nothing", () => {
  // Every kind of bad file is named in config-as-code/read-file.test.ts; here, what the user sees.
  it("a secret whose environment variable is not set, or a bad file, naming the variable, the file, line and field", async () => {
    const key = account("refusals");
    const missing = await cli({ ...key, ORDERS_TARGET_SECRET: "x" }, ["apply", "-f", file("missing.yaml", WEBHOOKS)]);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toContain("missing.yaml: endpoints.0.secretFromEnv: the environment variable STRIPE_SECRET is not set");

    const bad = await cli({ ...key, ...SECRETS }, ["apply", "-f", file("bad.yaml", WEBHOOKS.replace("keepPath: false", "keepPath: no"))]);
    expect(bad).toMatchObject({ code: 1, stdout: "" });
    expect(bad.stderr).toMatch(/^error: .*bad\.yaml:14:17: endpoints\.1\.forward\.keepPath: .*expected boolean.* \(type\)$/m);
    expect(await endpointsOf(key)).toEqual([]);
  });
});

describe("whc alerts", () => {
  it("creates a channel (its secret printed once), lists it, tests it against a real local server and waits for the answer, deletes it by name", async () => {
    const key = account("alerts-cli");
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
    try {
      const created = await cli(key, ["alerts", "create", "--name", "pager", "--type", "webhook", "--url", url, "--event", "delivery.exhausted", "--event", "signature.failed"]);
      expect(created.code, created.stderr).toBe(0);
      const secret = /secret (whsec_\S+) \(shown this once/.exec(created.stdout)?.[1];
      expect(secret).toBeDefined();

      const listed = await cli(key, ["alerts", "list"]);
      expect(listed.stdout).toMatch(/pager +webhook +delivery\.exhausted,signature\.failed +all +none yet/);

      const tested = await cli(key, ["alerts", "test", "pager", "--wait"]);
      expect(tested.code, tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/^test alert [0-9a-f-]{36} delivered to pager \(204\)$/m);
      const message = new Webhook(secret!).verify(received[0]!.body, received[0]!.headers as Record<string, string>);
      expect(message).toMatchObject({ type: "test", data: { channelName: "pager" } });

      const refused = await cli(key, ["alerts", "create", "--name", "pager", "--type", "slack", "--url", url, "--event", "test"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("name");
      expect((await cli(key, ["alerts", "delete", "pager"])).stdout).toMatch(/^deleted alert channel [0-9a-f-]{36} \(pager\)$/m);
      expect((await cli(key, ["alerts", "test", "pager"])).code).toBe(2);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
