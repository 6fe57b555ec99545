import { Worker } from "node:worker_threads";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "@whc/catalog-core";
import type * as Esbuild from "esbuild";
import { fromErrorMessage, type ErrorMessage } from "./worker-errors.js";
import { encodeAppend, encodeObservations } from "./append-codec.js";
import { createSharedBytes } from "./shared-bytes.js";
import Database from "better-sqlite3";
import { createApiKeys } from "./api-keys.js";
import { createEndpoints } from "./endpoints.js";
import { translateSqliteError } from "./errors.js";

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * The worker: the bundled script beside dist/<app>/main.js, or, when running from sources
 * (tests, `tsx`), the TypeScript worker bundled once by esbuild (a development dependency) with
 * tools/build.mjs's options (worker-build.json) under node_modules/.cache, named by its content,
 * and reused by every worker and process:
 * loading the sources through tsx in each new thread cost about a second per store.
 */
async function startWorker(file: string): Promise<Worker> {
  const bundled = new URL("./sqlite-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return new Worker(bundled, { workerData: { file } });
  return new Worker(await (sourceWorker ??= bundleSourceWorker()), { workerData: { file } });
}

let sourceWorker: Promise<string> | undefined;

async function bundleSourceWorker(): Promise<string> {
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  // Not a literal: a bundle of this module (the CLI's) must not pull esbuild in.
  const esbuildPackage = "esbuild";
  const esbuild = (await import(esbuildPackage)) as typeof Esbuild;
  // As tools/build.mjs bundles it: its packages inside, better-sqlite3 loaded from node_modules.
  const options = JSON.parse(readFileSync(new URL("./worker-build.json", import.meta.url), "utf8")) as Esbuild.BuildOptions;
  const out = await esbuild.build({
    ...options,
    entryPoints: [fileURLToPath(new URL("./sqlite-worker.ts", import.meta.url))],
    write: false,
    tsconfig: path.join(root, "tsconfig.base.json"),
    logLevel: "warning",
  });
  const code = out.outputFiles[0]!.contents;
  const dir = path.join(root, "node_modules", ".cache", "whc");
  const target = path.join(dir, `sqlite-worker-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${target}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, code);
    renameSync(partial, target);
  }
  return target;
}

/**
 * The store's thread is gone: every call is refused. What stopped it is said, as it is the
 * line start-up fails with when the file cannot be opened (a full disk is SQLITE_FULL).
 */
function stopped(cause: unknown): AppError {
  const { code } = (cause ?? {}) as { code?: unknown };
  const why = typeof code === "string" && code.startsWith("SQLITE_") ? `: ${code}` : "";
  return new AppError("service_unavailable", `embedded store stopped${why}`, { cause });
}

/** The reads made on the caller's thread (ADR 0099). */
type PointReads = Pick<CatalogStore, "findApiKeyByHash" | "getEndpoint"> & { close(): void };

/**
 * Point reads on the caller's thread (ADR 0099): the key a request was made with, and an
 * endpoint by id, from a read-only connection to the same file. A message to the store's thread
 * and its answer cost about 50 µs of CPU and as much wait when that thread sleeps, and queue
 * behind its appends when it does not; each of these reads is one indexed row. WAL lets it run
 * beside the store's writes and see every commit answered before it. It never waits for a lock
 * (a WAL reader meets one only while another connection recovers the WAL, which the store's
 * thread did before its first answer): one would answer service_unavailable, as the store's
 * thread does when it cannot get it. None for an in-memory file, which no other connection can
 * open, nor when the file cannot be opened read-only: the store's thread answers those reads.
 */
function openPointReads(file: string): PointReads | undefined {
  if (file === ":memory:") return undefined;
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return undefined;
  }
  const refuse = () => {
    throw new Error("point reads write nothing");
  };
  const keys = createApiKeys(db, refuse);
  const endpoints = createEndpoints(db, refuse);
  const read =
    <A extends unknown[], T>(method: string, run: (...args: A) => Promise<T>) =>
    async (...args: A): Promise<T> => {
      try {
        return await run(...args);
      } catch (err) {
        throw translateSqliteError(err, method, db.open);
      }
    };
  return {
    findApiKeyByHash: read("findApiKeyByHash", keys.findApiKeyByHash),
    getEndpoint: read("getEndpoint", endpoints.getEndpoint),
    close: () => db.close(),
  };
}

/**
 * The embedded store behind a worker thread: the same CatalogStore, every call a message but
 * the point reads (openPointReads). An append carries one clock reading per event; the worker
 * stamps in its transaction.
 */
export async function openSqliteStoreInWorker(options: { file: string }): Promise<CatalogStore> {
  const worker = await startWorker(options.file);
  const pending = new Map<number, Pending>();
  let next = 0;
  let failure: unknown;
  worker.on("message", ({ id, result, error }: { id: number; result?: unknown; error?: ErrorMessage }) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (!error) return p.resolve(result);
    p.reject(fromErrorMessage(error));
  });
  const fail = (err: unknown) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(stopped(failure));
    pending.clear();
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`store worker exited with ${code}`)));

  const call = (method: string, ...args: unknown[]) =>
    new Promise<any>((resolve, reject) => {
      if (failure) return reject(stopped(failure));
      const id = (next += 1);
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, method, args });
    });

  const shared = createSharedBytes();

  // The first answer proves the worker opened the file (and made its schema current).
  await call("ping");
  const reads = openPointReads(options.file);

  return {
    kind: "sqlite",
    ensureApiKey: (...a) => call("ensureApiKey", ...a),
    createApiKey: (...a) => call("createApiKey", ...a),
    // Point reads here; the store's thread's without them; refused like any call once it stopped.
    findApiKeyByHash: (...a) => (failure ? Promise.reject(stopped(failure)) : reads ? reads.findApiKeyByHash(...a) : call("findApiKeyByHash", ...a)),
    listApiKeys: (...a) => call("listApiKeys", ...a),
    revokeApiKey: (...a) => call("revokeApiKey", ...a),
    touchApiKey: (...a) => call("touchApiKey", ...a),
    countActiveApiKeys: () => call("countActiveApiKeys"),
    purgeApiKeys: (...a) => call("purgeApiKeys", ...a),
    createEndpoint: (...a) => call("createEndpoint", ...a),
    getEndpoint: (...a) => (failure ? Promise.reject(stopped(failure)) : reads ? reads.getEndpoint(...a) : call("getEndpoint", ...a)),
    listEndpoints: (...a) => call("listEndpoints", ...a),
    deleteEndpoint: (...a) => call("deleteEndpoint", ...a),
    updateEndpoint: (...a) => call("updateEndpoint", ...a),
    // Encoded (append-codec.ts), with each event's clock reading: a few blocks the clone
    // copies whole instead of every value of every event, the bytes in shared memory.
    appendEvents: async (events, clock) => {
      let lent: ReturnType<typeof shared.lend> | undefined;
      const encoded = encodeAppend(
        events,
        events.map(() => clock()),
        (length) => (lent = shared.lend(length)).bytes,
      );
      try {
        return await call("appendEvents", encoded);
      } finally {
        lent?.giveBack();
      }
    },
    listEvents: (...a) => call("listEvents", ...a),
    getEvent: (...a) => call("getEvent", ...a),
    deleteEvent: (...a) => call("deleteEvent", ...a),
    chargeReplay: (...a) => call("chargeReplay", ...a),
    getReplayUsage: (...a) => call("getReplayUsage", ...a),
    recordReplayAudit: (...a) => call("recordReplayAudit", ...a),
    purgeEvents: (...a) => call("purgeEvents", ...a),
    countDedupeKeys: (...a) => call("countDedupeKeys", ...a),
    recordAudit: (...a) => call("recordAudit", ...a),
    listAudit: (...a) => call("listAudit", ...a),
    purgeAudit: (...a) => call("purgeAudit", ...a),
    claimDeliveries: (...a) => call("claimDeliveries", ...a),
    beginForwardAttempt: (...a) => call("beginForwardAttempt", ...a),
    recordForwardAttempt: (...a) => call("recordForwardAttempt", ...a),
    nextDueAt: (...a) => call("nextDueAt", ...a),
    outboxStats: () => call("outboxStats"),
    recordProxyAnswer: (...a) => call("recordProxyAnswer", ...a),
    destinationBreakers: (...a) => call("destinationBreakers", ...a),
    settleDestinations: (...a) => call("settleDestinations", ...a),
    activeBreakers: () => call("activeBreakers"),
    countRejections: (...a) => call("countRejections", ...a),
    countEventsAfter: (...a) => call("countEventsAfter", ...a),
    putListener: (...a) => call("putListener", ...a),
    listListeners: (...a) => call("listListeners", ...a),
    deleteListener: (...a) => call("deleteListener", ...a),
    createAlertChannel: (...a) => call("createAlertChannel", ...a),
    listAlertChannels: (...a) => call("listAlertChannels", ...a),
    deleteAlertChannel: (...a) => call("deleteAlertChannel", ...a),
    raiseAlerts: (...a) => call("raiseAlerts", ...a),
    claimAlerts: (...a) => call("claimAlerts", ...a),
    recordAlertAttempt: (...a) => call("recordAlertAttempt", ...a),
    nextAlertDueAt: (...a) => call("nextAlertDueAt", ...a),
    purgeAlerts: (...a) => call("purgeAlerts", ...a),
    // Encoded like an append's strings (append-codec.ts): a thousand observations share a few.
    learnSchemas: (observations, noticeIntervalMs) => call("learnSchemas", encodeObservations(observations), noticeIntervalMs),
    listSchemas: (...a) => call("listSchemas", ...a),
    getSchema: (...a) => call("getSchema", ...a),
    countRedeliveries: (...a) => call("countRedeliveries", ...a),
    createRedeliveryJob: (...a) => call("createRedeliveryJob", ...a),
    getRedeliveryJob: (...a) => call("getRedeliveryJob", ...a),
    listRedeliveryJobs: (...a) => call("listRedeliveryJobs", ...a),
    cancelRedeliveryJob: (...a) => call("cancelRedeliveryJob", ...a),
    claimRedeliveryJob: (...a) => call("claimRedeliveryJob", ...a),
    runRedeliveryPage: (...a) => call("runRedeliveryPage", ...a),
    releaseRedeliveryJob: (...a) => call("releaseRedeliveryJob", ...a),
    purgeRedeliveryJobs: (...a) => call("purgeRedeliveryJobs", ...a),
    ping: () => (failure ? Promise.resolve(false) : call("ping")),
    async close() {
      reads?.close();
      if (!failure) await call("close").catch(() => undefined);
      await worker.terminate();
    },
  };
}
