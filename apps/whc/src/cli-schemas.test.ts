import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import type { EndpointJson, EventDetailJson, EventListJson, SchemaListJson } from "@whc/api-model";
import { buildApps, startAllInOne, tempDir, waitFor, type RunningProcess } from "@whc/testing";

/**
 * `whc schemas <endpoint> [eventType]`, `whc events list --drift|--no-drift` and the drift in
 * `whc events get` (design §19), against a real all-in-one process.
 */

let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;

function run(args: string[]): Promise<{ code: number; text: string; stderr: string }> {
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

let endpoint: EndpointJson;
let drifted: string;

async function capture(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(endpoint.webhookUrl, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-schemas-");
  const aio = await startAllInOne(mains["all-in-one"]!, dir.path);
  server = aio.proc;
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: aio.gatewayUrl };
  env.WHC_API_KEY = json<{ key: string }>(await ok("--json", "keys", "create", "--account", "cli-schemas")).key;
  endpoint = json<EndpointJson>(await ok("--json", "endpoints", "create", "--slug", "learned"));
  for (let i = 0; i < 20; i += 1) await capture({ type: "order.paid", id: `ord_${i}`, total: 100 + i, items: [{ sku: `s${i}` }] });
  drifted = await capture({ type: "order.paid", id: "ord_20", total: "120.00", items: [{ sku: "s20" }] });
  await waitFor(async () => json<SchemaListJson>(await ok("--json", "schemas", "learned")).items[0]?.samples === 21, { what: "21 samples learned" });
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe("whc schemas", () => {
  it("prints each event type's paths, types and presence; --json is the API's list", async () => {
    const text = await ok("schemas", "learned");
    expect(text).toMatch(/^order\.paid: 21 sample\(s\), \S+ to \S+$/m);
    expect(text).toMatch(/^PATH +TYPES +PRESENT$/m);
    expect(text).toMatch(/^total +string\|integer +100 %$/m);
    expect(text).toMatch(/^items\[\]\.sku +string +100 %$/m);
    const listed = json<SchemaListJson>(await ok("--json", "schemas", endpoint.id));
    expect(listed.items.map((s) => [s.eventType, s.samples])).toEqual([["order.paid", 21]]);
  });

  it("prints one type's JSON Schema; an unknown type or endpoint exits 2", async () => {
    const schema = json<Record<string, any>>(await ok("schemas", "learned", "order.paid"));
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.properties.items).toEqual({ type: "array", items: { type: "object", properties: { sku: { type: "string" } } } });
    expect((await run(["schemas", "learned", "order.refunded"])).code).toBe(2);
    expect((await run(["schemas", "no-such-endpoint"])).code).toBe(2);
  });
});

describe("drift in whc events", () => {
  it("lists drifted events with --drift, the others with --no-drift, and events get says what drifted", async () => {
    const ids = async (...args: string[]) => json<EventListJson>(await ok("--json", "events", "list", "learned", ...args)).items.map((e) => e.id);
    expect(await ids("--drift")).toEqual([drifted]);
    expect(await ids("--no-drift")).toHaveLength(20);
    expect(await ids()).toHaveLength(21);
    expect(await ok("events", "get", "learned", drifted)).toMatch(/^schema drift +total: integer -> string$/m);
    expect(json<EventDetailJson>(await ok("--json", "events", "get", "learned", drifted)).schemaDrift).toEqual([
      { path: "total", change: "type_changed", seen: ["integer"], now: "string" },
    ]);
  });
});
