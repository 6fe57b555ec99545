import { parentPort, workerData } from "node:worker_threads";
import type { CatalogStore } from "@whc/catalog-core";
import { openSqliteStore } from "./sqlite-store.js";
import { toErrorMessage } from "./worker-errors.js";

/**
 * The embedded store on its own thread: commits (and their fsyncs) and queries run here, off
 * the event loop that answers HTTP. Appends arrive with the clock readings of their events
 * (taken by the caller, whose clock tests may set) and are stamped here, inside their
 * transaction. Their search tokens come packed, one buffer per event.
 */
interface Call {
  id: number;
  method: keyof CatalogStore;
  args: unknown[];
}

const store = openSqliteStore({ file: (workerData as { file: string }).file });

parentPort!.on("message", async ({ id, method, args }: Call) => {
  try {
    let result: unknown;
    if (method === "appendEvents") {
      const times = args[1] as number[];
      let i = 0;
      result = await store.appendEvents(args[0] as Parameters<CatalogStore["appendEvents"]>[0], () => times[i++] as number);
    } else {
      result = await (store[method] as (...a: unknown[]) => Promise<unknown>)(...args);
    }
    parentPort!.postMessage({ id, result });
  } catch (err) {
    parentPort!.postMessage({ id, error: toErrorMessage(err) });
  }
});
