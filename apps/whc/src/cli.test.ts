import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
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
  it("creates a key beside a running server, uses it, lists and revokes it", async () => {
    const created = JSON.parse(await cli("--json", "keys", "create", "--account", "cli-team")) as { id: string; key: string };
    expect(created.key).toMatch(/^whc_[A-Za-z0-9]{40}$/);
    env.WHC_API_KEY = created.key;

    const endpoint = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "from-cli")) as { id: string; webhookUrl: string };
    expect(endpoint.webhookUrl).toBe(`${ingestUrl}/h/${endpoint.id}`);
    expect(await cli("endpoints", "list")).toContain("from-cli");

    const listed = JSON.parse(await cli("--json", "keys", "list", "--account", "cli-team")) as { id: string; prefix: string }[];
    expect(listed.map((k) => k.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    await cli("keys", "revoke", created.id);
    await expect(cli("endpoints", "list")).rejects.toMatchObject({ stderr: expect.stringContaining("unauthorized") });
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

  it("reports API errors with their code and request id", async () => {
    env.WHC_API_KEY = `whc_${"z".repeat(40)}`;
    await expect(cli("endpoints", "list")).rejects.toMatchObject({
      stderr: expect.stringMatching(/A valid API key is required\. \(unauthorized, request [0-9a-f-]{36}\)/),
    });
  });
});
