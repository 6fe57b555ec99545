import path from "node:path";
import { catalogStoreContract } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { openSqliteStoreInWorker } from "./worker-store.js";

let dir: ReturnType<typeof tempDir> | undefined;

catalogStoreContract("embedded SQLite on a worker thread", {
  async open() {
    dir = tempDir("whc-sqlite-worker-");
    return openSqliteStoreInWorker({ file: path.join(dir.path, "catalog.db") });
  },
  async cleanup() {
    dir?.remove();
  },
});
