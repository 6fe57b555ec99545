import { describe, it, expect, afterEach } from "vitest";
import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, statfsSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  apiClient,
  buildApps,
  createOpenApiValidator,
  freePort,
  startNode,
  waitFor,
  type ApiClient,
  type ApiResponse,
} from "@whc/testing";
import { startCluster } from "./cluster.js";

/**
 * Disk full on the embedded store (docs/operations.md): the data directory is a small tmpfs,
 * filled by a file of the test's own and by captures until commits fail. Senders are told 503
 * with Retry-After and nothing they were answered 200 is lost; lists and searches go on (an
 * event's detail waits for room for its audit entry); once the file is deleted, captures,
 * writes and detail reads succeed again in the same processes.
 */

const TMPFS_SIZE = "24m";
const MiB = 1024 * 1024;
/** Large enough that a few captures fill what the filler leaves, under WHC_MAX_STORED_BODY_BYTES. */
const LARGE_PAD = 300 * 1024;

interface Tmpfs {
  path: string;
  unmount(): void;
}

/** A fresh tmpfs, or why one cannot be mounted here (not root, no CAP_SYS_ADMIN, no mount). */
function mountTmpfs(): Tmpfs | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "whc-e2e-diskfull-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_SIZE},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    rmdirSync(dir);
    const said = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split("\n")[0];
    return `cannot mount a tmpfs here (${said || "mount failed"}): the disk-full test needs root or CAP_SYS_ADMIN`;
  }
  return {
    path: dir,
    unmount() {
      try {
        execFileSync("umount", [dir], { stdio: "pipe" });
      } catch {
        // Still busy (a process that would not stop): detach it now, freed when released.
        execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      }
      rmdirSync(dir);
    },
  };
}

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Appends zeros to `file` until its file system has at most `leave` bytes free (0: until ENOSPC). */
function fill(file: string, leave: number): void {
  const dir = path.dirname(file);
  const chunk = Buffer.alloc(MiB);
  const fd = openSync(file, "a");
  try {
    for (let free = freeBytes(dir); free > leave; free = freeBytes(dir)) {
      writeSync(fd, chunk, 0, Math.min(chunk.length, free - leave));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
}

interface Sent {
  id: string;
  body: string;
}

type Answer = { status: number; id?: string; error?: string; retryAfter: string | null };

async function capture(webhookUrl: string, body: string): Promise<Answer> {
  const res = await fetch(webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
  const json = (await res.json()) as { id?: string; error?: string };
  return { status: res.status, id: json.id, error: json.error, retryAfter: res.headers.get("retry-after") };
}

/** A refusal as design §4 says a storage outage is answered. */
function expectOutage(a: Answer): void {
  expect({ status: a.status, error: a.error, retryAfter: a.retryAfter, id: a.id }).toEqual({
    status: 503,
    error: "service_unavailable",
    retryAfter: "5",
    id: undefined,
  });
}

/** Captures until one is refused (at most `max`): the ones answered 200 go into `acked`. */
async function captureUntilRefused(webhookUrl: string, bodyOf: (n: number) => string, acked: Sent[], max: number): Promise<Answer> {
  for (let n = 0; n < max; n += 1) {
    const body = bodyOf(n);
    const a = await capture(webhookUrl, body);
    if (a.status !== 200) return a;
    acked.push({ id: a.id!, body });
  }
  throw new Error(`${max} captures all stored: the disk never filled`);
}

async function listedIds(api: ApiClient, endpointId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (;;) {
    const page = await api.get(`/v1/endpoints/${endpointId}/events?limit=200${cursor}`);
    expect(page.status).toBe(200);
    ids.push(...(page.body.items as { id: string }[]).map((e) => e.id));
    if (!page.body.nextBefore) return ids;
    cursor = `&before=${encodeURIComponent(page.body.nextBefore)}&beforeId=${page.body.nextBeforeId}`;
  }
}

/** After the processes stopped: the catalog file is whole (nothing a failed commit left half-written). */
function expectIntact(dataDir: string): void {
  const db = new Database(path.join(dataDir, "catalog.db"));
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  } finally {
    db.close();
  }
}

/**
 * The whole story against one running system whose data directory is `dataDir`, with
 * `alive` saying whether every process of it is still the one started. Returns what it
 * counted, for the test's printout.
 */
async function diskFullStory(api: ApiClient, dataDir: string, alive: () => boolean) {
  const filler = path.join(dataDir, "filler.bin");
  const ep = (await api.post("/v1/endpoints", { slug: "disk-full" })).body as { id: string; webhookUrl: string };
  const acked: Sent[] = [];
  const early = '{"type":"early","note":"haystack before the disk filled"}';
  const first = await capture(ep.webhookUrl, early);
  expect(first.status).toBe(200);
  acked.push({ id: first.id!, body: early });

  // Filling: what the filler leaves is taken by large captures from four senders at once,
  // so that batches of several senders fail together.
  fill(filler, 3 * MiB);
  const large = (sender: number) => (n: number) => JSON.stringify({ type: "bulk", sender, n, pad: "a".repeat(LARGE_PAD) });
  const refusals = await Promise.all([0, 1, 2, 3].map((s) => captureUntilRefused(ep.webhookUrl, large(s), acked, 100)));
  refusals.forEach(expectOutage);
  const storedWhileFilling = acked.length - 1;

  // Full to the last byte: small writes can still land in room the failed commits left
  // inside the store's files, until they cannot.
  fill(filler, 0);
  const small = (n: number) => JSON.stringify({ type: "small", n });
  expectOutage(await captureUntilRefused(ep.webhookUrl, small, acked, 200));
  const storedWhenFull = acked.length - 1 - storedWhileFilling;
  expectOutage(await capture(ep.webhookUrl, small(-1)));
  const created: string[] = [];
  for (let n = 0; ; n += 1) {
    expect(n).toBeLessThan(50);
    const res = await api.post("/v1/endpoints", { slug: `while-full-${n}` });
    if (res.status === 201) {
      created.push((res.body as { id: string }).id);
      continue;
    }
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("service_unavailable");
    expect(res.headers.get("retry-after")).toBe("5");
    break;
  }

  // Reads while full: the list, search and endpoints are served. A detail holds the body, and
  // no body is served without its audit entry (design §15, ADR 0053): with no room to write
  // the entry, the detail is 503 service_unavailable, and served once there is room again.
  // Failed commits can leave room in the store's files for an entry or two where an endpoint
  // no longer fits (the refusal above): a detail whose entry still fits is served whole, and
  // the entries take that room until the first refusal.
  expect(alive()).toBe(true);
  expect(new Set(await listedIds(api, ep.id))).toEqual(new Set(acked.map((s) => s.id)));
  let unaudited: ApiResponse | undefined;
  for (const sent of acked) {
    const detail = await api.get(`/v1/endpoints/${ep.id}/events/${sent.id}`);
    if (detail.status !== 200) {
      unaudited = detail;
      break;
    }
    expect(detail.body).toMatchObject({ decryption: "ok", body: sent.body });
  }
  expect(unaudited?.status).toBe(503);
  expect(unaudited?.body.error).toBe("service_unavailable");
  const found = await api.get(`/v1/endpoints/${ep.id}/events?search=haystack`);
  expect(found.status).toBe(200);
  expect((found.body.items as { id: string }[]).map((e) => e.id)).toEqual([first.id]);
  const endpoints = await api.get("/v1/endpoints?limit=100");
  expect(endpoints.status).toBe(200);
  expect((endpoints.body.items as { id: string }[]).map((e) => e.id)).toEqual(expect.arrayContaining([ep.id, ...created]));

  // Space returns: no restart, the next captures and writes succeed.
  rmSync(filler);
  await waitFor(
    async () => {
      const body = JSON.stringify({ type: "after", note: "room again" });
      const a = await capture(ep.webhookUrl, body);
      if (a.status !== 200) return expectOutage(a);
      acked.push({ id: a.id!, body });
      return true;
    },
    { what: "a capture stored after space returned", intervalMs: 100 },
  );
  const big = large(9)(0);
  const stored = await capture(ep.webhookUrl, big);
  expect(stored.status).toBe(200);
  acked.push({ id: stored.id!, body: big });
  expect((await api.post("/v1/endpoints", { slug: "after-full" })).status).toBe(201);
  expect(alive()).toBe(true);

  // Nothing acknowledged lost, nothing refused stored; the read that could not be recorded
  // while full is recorded now.
  expect((await listedIds(api, ep.id)).sort()).toEqual(acked.map((s) => s.id).sort());
  // Every capture answered 200 reads back whole, each read now audited.
  for (const sent of acked) {
    const detail = await api.get(`/v1/endpoints/${ep.id}/events/${sent.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ decryption: "ok", body: sent.body });
  }
  const reread = await api.get(`/v1/endpoints/${ep.id}/events/${first.id}`);
  expect(reread.status).toBe(200);
  expect(reread.body.readAt).toEqual(expect.any(String));
  expect(acked.filter((s) => s.body.includes('"bulk"')).length).toBeGreaterThan(0);
  return {
    counts: { storedWhileFilling, storedWhenFull, createdWhenFull: created.length },
    endpointId: ep.id,
    acked: acked.map((s) => s.id),
  };
}

let mounted: Tmpfs | undefined;
let stops: (() => Promise<unknown>)[] = [];

// Always: the processes first (they hold files on it), then the mount.
afterEach(async () => {
  await Promise.allSettled(stops.map((stop) => stop()));
  stops = [];
  mounted?.unmount();
  mounted = undefined;
});

function mountOrSkip(skip: (note: string) => never): Tmpfs {
  const m = mountTmpfs();
  if (typeof m === "string") skip(m);
  return (mounted = m);
}

describe("disk full on the embedded store", () => {
  it("all-in-one: 503 with Retry-After while full, every 200 readable, reads served, back without a restart; started while full, one line", async (ctx) => {
    const tmpfs = mountOrSkip(ctx.skip);
    const { "all-in-one": main } = buildApps("all-in-one");
    const [gatewayPort, ingestPort] = [await freePort(), await freePort()];
    const env = {
      WHC_DATA_DIR: tmpfs.path,
      WHC_HOST: "127.0.0.1",
      WHC_GATEWAY_PORT: String(gatewayPort),
      WHC_INGEST_PORT: String(ingestPort),
      WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPort}`,
    };
    const start = () => {
      const proc = startNode(main!, env);
      stops.push(() => proc.stop());
      return proc;
    };
    const proc = start();
    const key = (await proc.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1]!;
    await proc.waitForOutput(/webhook-capture ready/);
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const validator = createOpenApiValidator((await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>);
    const api = apiClient(gatewayUrl, key, validator);
    const story = await diskFullStory(api, tmpfs.path, () => proc.child.exitCode === null && proc.child.signalCode === null);
    expect(await proc.stop()).toBe(0);
    expectIntact(tmpfs.path);

    // Started while the disk is full, the process stops at start-up with one line saying
    // why; started again once there is room, it has every event and its key ring.
    const filler = path.join(tmpfs.path, "filler.bin");
    fill(filler, 0);
    const refused = start();
    expect(await new Promise((resolve) => refused.child.once("exit", resolve))).toBe(1);
    expect(refused.output().trim()).toMatch(/^webhook-capture: start-up failed: embedded store stopped: SQLITE_(FULL|IOERR_\w+)$/);
    rmSync(filler);
    const again = start();
    await again.waitForOutput(/webhook-capture ready/);
    expect(again.output()).not.toMatch(/whc_[A-Za-z0-9]{32,}/);
    expect((await listedIds(api, story.endpointId)).sort()).toEqual(story.acked.sort());
    console.log("disk full, all-in-one:", JSON.stringify(story.counts));
  }, 120_000);

  it("distributed with the SQLite catalog process: the same", async (ctx) => {
    const tmpfs = mountOrSkip(ctx.skip);
    const cluster = await startCluster({ WHC_DATA_DIR: tmpfs.path });
    stops.push(() => cluster.shutdown());
    const alive = () => Object.values(cluster.procs).every((p) => p.child.exitCode === null && p.child.signalCode === null);
    const story = await diskFullStory(cluster.api, tmpfs.path, alive);
    expect(await cluster.stop("catalog")).toBe(0);
    expectIntact(tmpfs.path);
    console.log("disk full, distributed:", JSON.stringify(story.counts));
  }, 120_000);
});
