import { parentPort, workerData } from "node:worker_threads";
import type { CatalogStore } from "@whc/catalog-core";
import { openSqliteStore } from "./sqlite-store.js";
import { toErrorMessage } from "./worker-errors.js";
import { decodeAppend, decodeObservations, type EncodedAppend, type EncodedObservations } from "./append-codec.js";

/**
 * The embedded store on its own thread: commits (and their fsyncs) and queries run here, off
 * the event loop that answers HTTP. Appends arrive with the clock readings of their events
 * (taken by the caller, whose clock tests may set) and are stamped here, inside their
 * transaction. They come encoded (append-codec.ts): a table of strings, one array of numbers,
 * and every event's bytes in memory shared for the call; schema observations come the same way.
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
      const { events, times } = decodeAppend(args[0] as EncodedAppend);
      let i = 0;
      result = await store.appendEvents(events, () => times[i++] as number);
    } else if (method === "learnSchemas") {
      result = await store.learnSchemas(decodeObservations(args[0] as EncodedObservations), args[1] as number);
    } else {
      result = await (store[method] as (...a: unknown[]) => Promise<unknown>)(...args);
    }
    parentPort!.postMessage({ id, result });
  } catch (err) {
    parentPort!.postMessage({ id, error: toErrorMessage(err) });
  }
});
