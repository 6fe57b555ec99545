import { Worker } from "node:worker_threads";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AppError } from "@whc/errors";
import type { CatalogStore, NewEvent } from "@whc/catalog-core";
import { packTokens } from "./token-pack.js";
import { fromErrorMessage, type ErrorMessage } from "./worker-errors.js";

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * The worker: the bundled script beside dist/<app>/main.js, or, when running from sources
 * (tests), the TypeScript file loaded through tsx with the workspace's path aliases.
 */
function startWorker(file: string): Worker {
  const bundled = new URL("./sqlite-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return new Worker(bundled, { workerData: { file } });
  const source = new URL("./sqlite-worker.ts", import.meta.url).href;
  const tsconfig = fileURLToPath(new URL("../../../tsconfig.base.json", import.meta.url));
  const boot = `import("tsx/esm/api").then((tsx) => tsx.tsImport(${JSON.stringify(source)}, { parentURL: ${JSON.stringify(source)}, tsconfig: ${JSON.stringify(tsconfig)} }))`;
  return new Worker(boot, { eval: true, workerData: { file } });
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

/**
 * The embedded store behind a worker thread: the same CatalogStore, every call a message.
 * An append carries one clock reading per event; the worker stamps in its transaction.
 */
export async function openSqliteStoreInWorker(options: { file: string }): Promise<CatalogStore> {
  const worker = startWorker(options.file);
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

  // The first answer proves the worker opened the file.
  await call("ping");

  return {
    kind: "sqlite",
    ensureApiKey: (...a) => call("ensureApiKey", ...a),
    findApiKeyByHash: (...a) => call("findApiKeyByHash", ...a),
    listApiKeys: (...a) => call("listApiKeys", ...a),
    revokeApiKey: (...a) => call("revokeApiKey", ...a),
    countActiveApiKeys: () => call("countActiveApiKeys"),
    createEndpoint: (...a) => call("createEndpoint", ...a),
    getEndpoint: (...a) => call("getEndpoint", ...a),
    listEndpoints: (...a) => call("listEndpoints", ...a),
    deleteEndpoint: (...a) => call("deleteEndpoint", ...a),
    updateEndpoint: (...a) => call("updateEndpoint", ...a),
    // Tokens travel packed in one buffer per event: cloning dozens of tiny typed arrays per
    // event cost more than the store's own work on them.
    appendEvents: (events, clock) =>
      call(
        "appendEvents",
        events.map((e): NewEvent => ({ ...e, searchTokens: [] })),
        events.map(() => clock()),
        events.map((e) => packTokens(e.searchTokens)),
      ),
    listEvents: (...a) => call("listEvents", ...a),
    getEvent: (...a) => call("getEvent", ...a),
    deleteEvent: (...a) => call("deleteEvent", ...a),
    chargeReplay: (...a) => call("chargeReplay", ...a),
    getReplayUsage: (...a) => call("getReplayUsage", ...a),
    recordReplayAudit: (...a) => call("recordReplayAudit", ...a),
    purgeEvents: (...a) => call("purgeEvents", ...a),
    claimDeliveries: (...a) => call("claimDeliveries", ...a),
    beginForwardAttempt: (...a) => call("beginForwardAttempt", ...a),
    recordForwardAttempt: (...a) => call("recordForwardAttempt", ...a),
    outboxStats: () => call("outboxStats"),
    recordProxyAnswer: (...a) => call("recordProxyAnswer", ...a),
    ping: () => (failure ? Promise.resolve(false) : call("ping")),
    async close() {
      if (!failure) await call("close").catch(() => undefined);
      await worker.terminate();
    },
  };
}
