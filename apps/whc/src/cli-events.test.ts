import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { EndpointJson, EventDetailJson, EventListJson, EventSummaryJson } from "@whc/api-model";
import { buildApps, freePort, startAllInOne, tempDir, type RunningProcess } from "@whc/testing";

/**
 * `whc endpoints get` and `whc events list|get|delete|export` against a real all-in-one process,
 * endpoints named by slug and by id, and the exit codes scripts branch on.
 */

let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;

interface Run {
  code: number;
  stdout: Buffer;
  text: string;
  stderr: string;
}

/** Runs whc and never throws: its exit code, stdout (bytes and text) and stderr. */
function run(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [whc, ...args],
      { env: { ...env, ...extraEnv, PATH: process.env.PATH ?? "" }, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout, text: stdout.toString("utf8"), stderr: stderr.toString("utf8") });
      },
    );
  });
}

/** A run that must succeed; its stdout as text. */
async function ok(...args: string[]): Promise<string> {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`whc ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.text;
}

const json = <T>(text: string) => JSON.parse(text) as T;
const ndjson = <T>(text: string) => text.trimEnd().split("\n").filter(Boolean).map((l) => JSON.parse(l) as T);

let endpoint: EndpointJson;
/** Captured oldest first: a JSON event, a form, a binary body with NUL and invalid UTF-8, then one more JSON event. */
let captured: string[];
const BINARY = Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x00, 0xc3, 0x28, 0x0a]);

async function capture(url: string, body: string | Buffer, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, { method: "POST", body, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-events-");
  const aio = await startAllInOne(mains["all-in-one"]!, dir.path);
  server = aio.proc;
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: aio.gatewayUrl };
  env.WHC_API_KEY = json<{ key: string }>(await ok("--json", "keys", "create", "--account", "cli-events")).key;
  endpoint = json<EndpointJson>(await ok("--json", "endpoints", "create", "--slug", "shop-hooks"));
  captured = [
    await capture(`${endpoint.webhookUrl}/orders?x=1`, '{"type":"order.created","id":"alpha-1"}', { "content-type": "application/json", "x-marker": "m1" }),
    await capture(endpoint.webhookUrl, "type=form.sent&word=bravo", { "content-type": "application/x-www-form-urlencoded" }),
    await capture(`${endpoint.webhookUrl}/bin`, BINARY, { "content-type": "application/octet-stream" }),
    await capture(endpoint.webhookUrl, '{"type":"order.paid","id":"alpha-2"}', { "content-type": "application/json" }),
  ];
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe("whc endpoints get", () => {
  it("shows one endpoint by slug or by id, the same in JSON", async () => {
    const bySlug = json<EndpointJson>(await ok("--json", "endpoints", "get", "shop-hooks"));
    const byId = json<EndpointJson>(await ok("--json", "endpoints", "get", endpoint.id));
    expect(bySlug).toEqual(byId);
    expect(bySlug).toMatchObject({ id: endpoint.id, slug: "shop-hooks", eventCount: 4 });
    const human = await ok("endpoints", "get", "shop-hooks");
    expect(human).toMatch(new RegExp(`^id +${endpoint.id}$`, "m"));
    expect(human).toMatch(new RegExp(`^webhook url +${endpoint.webhookUrl}$`, "m"));
    expect(human).toMatch(/^events +4, last /m);
  });
});

describe("whc events list", () => {
  it("lists newest first as a table, by slug or id, and --json prints the API's page", async () => {
    const table = (await ok("events", "list", "shop-hooks")).trimEnd().split("\n");
    expect(table[0]).toMatch(/^RECEIVED +METHOD +CODE +VERIFICATION +TYPE +SIZE +ID$/);
    expect(table.slice(1).map((l) => l.split(/ +/).at(-1))).toEqual([...captured].reverse());
    expect(table[1]).toMatch(/ POST +200 +unverified +order\.paid +\d+ B +[0-9a-f-]{36}$/);
    const page = json<EventListJson>(await ok("--json", "events", "list", endpoint.id));
    expect(page.items.map((e) => e.id)).toEqual([...captured].reverse());
  });

  it("filters by type, search, status and time", async () => {
    const ids = async (...args: string[]) => json<EventListJson>(await ok("--json", "events", "list", "shop-hooks", ...args)).items.map((e) => e.id);
    expect(await ids("-t", "order.created")).toEqual([captured[0]]);
    expect(await ids("-q", "ALPHA")).toEqual([captured[3], captured[0]]);
    expect(await ids("--search", "bravo")).toEqual([captured[1]]);
    expect(await ids("--response-code", "500")).toEqual([]);
    expect(await ids("--verification", "unverified", "--limit", "1")).toEqual([captured[3]]);
    expect(await ids("--from", "1h")).toHaveLength(4);
    expect(await ids("--to", "2000-01-01T00:00:00Z")).toEqual([]);
  });

  it("pages with --limit and the cursor it prints, and --all follows every page (NDJSON with --json)", async () => {
    const first = await run(["events", "list", "shop-hooks", "--limit", "3"]);
    expect(first.code).toBe(0);
    const cursor = /older: --before (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = json<EventListJson>(await ok("--json", "events", "list", "shop-hooks", "--limit", "3", "--before", cursor!));
    expect(second.items.map((e) => e.id)).toEqual([captured[0]]);

    const all = ndjson<EventSummaryJson>(await ok("--json", "events", "list", "shop-hooks", "--limit", "1", "--all"));
    expect(all.map((e) => e.id)).toEqual([...captured].reverse());
    const [oldest] = all.slice(-1);
    const forward = ndjson<EventSummaryJson>(
      await ok("--json", "events", "list", "shop-hooks", "--limit", "2", "--all", "--after", `${oldest!.receivedAt},${oldest!.id}`),
    );
    expect(forward.map((e) => e.id)).toEqual(captured.slice(1));
  });
});

describe("whc events get", () => {
  it("shows the metadata and headers, the detail with --json, and the exact body bytes with --body", async () => {
    const human = await ok("events", "get", "shop-hooks", captured[0]!);
    expect(human).toMatch(/^request +POST \/orders\?x=1$/m);
    expect(human).toMatch(/^body +utf8, \d+ B/m);
    expect(human).toContain("  x-marker: m1");
    const detail = json<EventDetailJson>(await ok("--json", "events", "get", endpoint.id, captured[0]!));
    expect(detail).toMatchObject({ id: captured[0], path: "/orders?x=1", body: '{"type":"order.created","id":"alpha-1"}' });

    const raw = await run(["events", "get", "shop-hooks", captured[2]!, "--body"]);
    expect(raw.code).toBe(0);
    expect(raw.stdout.equals(BINARY)).toBe(true);
  });
});

describe("whc events export", () => {
  it("writes every event's full detail, oldest first, one per line: the same JSON as events get", async () => {
    const r = await run(["events", "export", "shop-hooks"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("exported 4 events of shop-hooks\n");
    const lines = ndjson<EventDetailJson>(r.text);
    expect(lines.map((l) => l.id)).toEqual(captured);
    for (const line of lines) {
      const { readAt: _read, ...shown } = json<EventDetailJson>(await ok("--json", "events", "get", "shop-hooks", line.id));
      const { readAt: _exported, ...exported } = line;
      expect(exported).toEqual(shown);
    }
    expect(Buffer.from(lines[2]!.body!, "base64").equals(BINARY)).toBe(true);
  });

  it("takes the list's filters and --output, by id as by slug", async () => {
    const file = `${dir.path}/paid.ndjson`;
    expect((await run(["events", "export", endpoint.id, "-q", "alpha", "-o", file])).code).toBe(0);
    expect(ndjson<EventDetailJson>(readFileSync(file, "utf8")).map((l) => l.id)).toEqual([captured[0], captured[3]]);
    const after = ndjson<EventDetailJson>(await ok("events", "export", "shop-hooks", "--after", `${(await oneSummary(1)).receivedAt},${captured[1]}`));
    expect(after.map((l) => l.id)).toEqual(captured.slice(2));
  });

  it("resumes after the last whole line when the answer stalls mid-line: every event once, in order", async () => {
    const whole = await ok("events", "export", "shop-hooks");
    // Between whc and the gateway: the first export's answer stops, connection open, after its
    // second line and part of the third; every later connection passes untouched.
    const proxy = await stallingProxy(new URL(env.WHC_API_URL!).port, 2);
    try {
      const r = await run(["events", "export", "shop-hooks", "--stall-timeout", "0.5"], { WHC_API_URL: proxy.url });
      expect(r.stderr).toBe(
        "the export was cut short after 2 events (no data for 0.5 s); resuming after the last of them in 1 s\nexported 4 events of shop-hooks\n",
      );
      expect(r.code).toBe(0);
      expect(r.text).toBe(whole);
      expect(proxy.exports()).toBe(2);
    } finally {
      proxy.close();
    }
  });

  it("exits 4 once the resumes in a row bring nothing, keeping only whole lines and saying where to resume", async () => {
    const lines = [0, 1].map((n) => JSON.stringify({ id: `00000000-0000-4000-8000-00000000000${n}`, receivedAt: `2026-01-01T00:00:0${n}.000Z` }));
    const asked: string[] = [];
    const gateway = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/v1/endpoints") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [{ ...endpoint, slug: "cut" }] }));
        return;
      }
      asked.push(url.search);
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      // The first answer: two lines and a partial one; the resumed one, a partial line only.
      res.write(asked.length === 1 ? `${lines.join("\n")}\n{"id":"partial` : '{"id":"partial');
      // Gone without the chunked terminator, as the gateway leaves when a read fails mid-export.
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((r) => gateway.listen(0, "127.0.0.1", r));
    try {
      const r = await run(["events", "export", "cut", "--retries", "1"], { WHC_API_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}` });
      expect(r.code).toBe(4);
      expect(r.text).toBe(`${lines.join("\n")}\n`);
      expect(asked).toEqual(["", `?after=${encodeURIComponent("2026-01-01T00:00:01.000Z")}&afterId=00000000-0000-4000-8000-000000000001`]);
      expect(r.stderr).toMatch(/^the export was cut short after 2 events \(.+\); resuming after the last of them in 1 s\n/);
      expect(r.stderr).toContain("error: the export was cut short after 2 events");
      expect(r.stderr).toContain("resume with: whc events export cut --after 2026-01-01T00:00:01.000Z,00000000-0000-4000-8000-000000000001");
    } finally {
      gateway.close();
    }
  });
});

/**
 * A TCP proxy to the gateway on `port` that, on the first connection to ask for an export, stops
 * passing the answer on after its `lines`-th line and a few bytes of the next, leaving both
 * connections open; it counts the exports asked for.
 */
async function stallingProxy(port: string, lines: number) {
  let exports = 0;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(port), "127.0.0.1");
    sockets.add(client).add(upstream);
    let stalling = false;
    let seen = 0;
    client.on("data", (chunk: Buffer) => {
      if (/^GET \S+\/events\/export/m.test(chunk.toString("latin1")) && ++exports === 1) stalling = true;
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (seen >= lines) return;
      if (!stalling) return void client.write(chunk);
      // Each line of the answer ends with `}` and a newline, followed by the chunk's CRLF.
      for (let at = chunk.indexOf("}\n"); at >= 0; at = chunk.indexOf("}\n", at + 1)) {
        if (++seen === lines) {
          client.write(chunk.subarray(0, at + 12));
          upstream.pause();
          return;
        }
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) s.on("error", () => {}).on("close", () => (s === client ? upstream : client).destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    exports: () => exports,
    close() {
      for (const s of sockets) s.destroy();
      proxy.close();
    },
  };
}

/** The summary of the n-th capture (oldest first). */
async function oneSummary(n: number): Promise<EventSummaryJson> {
  const page = json<EventListJson>(await ok("--json", "events", "list", "shop-hooks"));
  return page.items.find((e) => e.id === captured[n])!;
}

describe("whc events diff", () => {
  it("prints what changed from one event to the other, --ignore leaves paths out, --json is the API's answer", async () => {
    const [first, , , last] = captured;
    const text = await ok("events", "diff", "shop-hooks", first!, last!);
    expect(text).toContain("~ /path: /orders -> \n");
    expect(text).toContain("- /query/x: 1");
    expect(text).toContain("- /headers/x-marker: m1");
    expect(text).toContain("~ /body/type: order.created -> order.paid");
    expect(text).toContain("~ /body/id: alpha-1 -> alpha-2");
    const ignored = json<{ same: boolean; bodyKind: string; changes: { path: string }[] }>(
      await ok("--json", "events", "diff", endpoint.id, first!, last!, "--ignore", "path,query,headers,body.type"),
    );
    expect(ignored.bodyKind).toBe("json");
    expect(ignored.changes.map((c) => c.path)).toEqual(["/body/id"]);
    expect(await ok("events", "diff", "shop-hooks", first!, first!)).toBe("same (body: json)\n");
    const binary = json<{ bodyKind: string }>(await ok("--json", "events", "diff", "shop-hooks", captured[2]!, last!));
    expect(binary.bodyKind).toBe("binary");
    expect((await run(["events", "diff", "shop-hooks", first!, "0190e5a4-0000-7000-8000-000000000000"])).code).toBe(2);
    // Five whc processes: room for a loaded machine.
  });
});

describe("whc events delete", () => {
  it("deletes by slug; reading it afterwards exits 2", async () => {
    const victim = await capture(endpoint.webhookUrl, '{"type":"to.delete"}', { "content-type": "application/json" });
    expect(await ok("events", "delete", "shop-hooks", victim)).toBe(`deleted ${victim} of shop-hooks\n`);
    const gone = await run(["events", "get", "shop-hooks", victim]);
    expect(gone).toMatchObject({ code: 2, stderr: expect.stringContaining("(not_found, request ") });
    expect(json<EventListJson>(await ok("--json", "events", "list", endpoint.id)).items.map((e) => e.id)).not.toContain(victim);
  });
});

describe("exit codes", () => {
  it("0 for help, 1 for usage errors and bad input", async () => {
    expect((await run(["--help"])).code).toBe(0);
    expect((await run(["--help"])).text).toContain("Exit codes:");
    expect((await run(["events", "lst"])).code).toBe(1);
    expect((await run(["events", "list", "shop-hooks", "--limit", "0"])).code).toBe(1);
    expect((await run(["events", "list", "shop-hooks", "--from", "last tuesday"])).code).toBe(1);
    expect((await run(["events", "list", "shop-hooks", "--before", "not-a-cursor"])).code).toBe(1);
    // Refused by the API as invalid (an event id that is no UUID): 1 as well.
    expect(await run(["events", "get", "shop-hooks", "not-a-uuid"])).toMatchObject({ code: 1, stderr: expect.stringContaining("validation_failed") });
  });

  it("2 when the endpoint or the event does not exist, whatever the command", async () => {
    const missing = 'error: no endpoint with the id or slug "nowhere" in this account\n';
    for (const args of [
      ["endpoints", "get", "nowhere"],
      ["events", "list", "nowhere"],
      ["events", "get", "nowhere", captured[0]!],
      ["events", "delete", "nowhere", captured[0]!],
      ["events", "export", "nowhere"],
      ["events", "curl", "nowhere", captured[0]!],
      ["endpoints", "update", "nowhere", "--pause"],
    ]) {
      expect(await run(args), args.join(" ")).toMatchObject({ code: 2, stderr: missing });
    }
    expect((await run(["events", "get", "shop-hooks", "00000000-0000-4000-8000-000000000000"])).code).toBe(2);
    expect((await run(["events", "curl", "shop-hooks", "00000000-0000-4000-8000-000000000000"])).code).toBe(2);
  });

  it("3 without a key or with a bad one, 4 when the API cannot be reached", async () => {
    expect(await run(["events", "list", "shop-hooks"], { WHC_API_KEY: "" })).toMatchObject({ code: 3, stderr: expect.stringContaining("no_api_key") });
    expect(await run(["events", "export", "shop-hooks"], { WHC_API_KEY: `whc_${"x".repeat(40)}` })).toMatchObject({
      code: 3,
      stderr: expect.stringContaining("unauthorized"),
    });
    const port = await freePort();
    expect(await run(["endpoints", "get", "shop-hooks"], { WHC_API_URL: `http://127.0.0.1:${port}` })).toMatchObject({
      code: 4,
      stderr: expect.stringContaining("unreachable"),
    });
  });
});
