import { afterEach, describe, expect, it } from "vitest";
import path from "node:path";
import { tempDir } from "@whc/testing";
import { openCatalogDatabase } from "./database.js";
import { createSchemas, withoutWaitingForTheDisk } from "./schemas.js";

/*
 * Schema learning commits without an fsync of its own (ADR 0090): only its transaction, never
 * an append's, which must stay synchronous=FULL (a 2xx means the capture is on the disk).
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function catalog() {
  const dir = tempDir("whc-sqlite-schemas-");
  const db = openCatalogDatabase(path.join(dir.path, "catalog.db"));
  cleanups.push(() => {
    db.close();
    dir.remove();
  });
  return db;
}

const FULL = 2;
const NORMAL = 1;
const level = (db: ReturnType<typeof catalog>) => db.pragma("synchronous", { simple: true });

describe("learning's commits", () => {
  it("run at synchronous=NORMAL, and leave the connection at FULL for the appends after them, also when they fail", () => {
    const db = catalog();
    expect(level(db)).toBe(FULL);
    db.exec("CREATE TABLE t (v INTEGER)");
    const insert = db.transaction(() => db.prepare("INSERT INTO t (v) VALUES (1)").run());
    const seen = withoutWaitingForTheDisk(db, () => {
      insert.immediate();
      return level(db);
    });
    expect(seen).toBe(NORMAL);
    expect(level(db)).toBe(FULL);
    expect(() =>
      withoutWaitingForTheDisk(db, () => {
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(level(db)).toBe(FULL);
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(1);
  });

  it("are what learnSchemas commits: NORMAL around its transaction, FULL again after it", async () => {
    const db = catalog();
    const levels: string[] = [];
    const pragma = db.pragma.bind(db);
    db.pragma = ((source: string, options?: Parameters<typeof pragma>[1]) => {
      if (source.startsWith("synchronous =")) levels.push(source);
      return pragma(source, options);
    }) as typeof db.pragma;
    const schemas = createSchemas(db);
    const observation = { accountId: "acct_1", endpointId: "0190a5d3-7c1e-7a00-8000-000000000001", eventType: "*", eventId: "e", receivedAt: 1, shape: ".\ns:id" };
    await schemas.learnSchemas([observation], 3_600_000);
    expect(levels).toEqual(["synchronous = NORMAL", `synchronous = ${FULL}`]);
    expect(level(db)).toBe(FULL);
  });
});
