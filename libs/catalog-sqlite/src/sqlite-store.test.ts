import { catalogStoreContract } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import path from "node:path";
import { openSqliteStore } from "./sqlite-store.js";

let dir: ReturnType<typeof tempDir> | undefined;

catalogStoreContract("embedded SQLite", {
  async open() {
    dir = tempDir("whc-sqlite-");
    return openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  },
  async cleanup() {
    dir?.remove();
  },
});
