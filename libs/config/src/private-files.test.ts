import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensurePrivateDir, ensurePrivateFile } from "./private-files.js";

const modeOf = (p: string) => statSync(p).mode & 0o777;

let root: string;
let umask: number;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "whc-private-"));
  // The usual umask, which leaves files 0644 and directories 0755 unless told otherwise.
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

describe("the data directory's files", () => {
  it("are created 0600 in a directory created 0700, parents included", () => {
    const dir = path.join(root, "a", "data");
    expect(ensurePrivateDir(dir)).toEqual({ created: true, openedTo: 0 });
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(path.dirname(dir))).toBe(0o700);
    const file = path.join(dir, "catalog.db");
    ensurePrivateFile(file);
    expect(modeOf(file)).toBe(0o600);
    expect(statSync(file).size).toBe(0);
  });

  it("tighten a file an earlier version left readable, and leave an existing directory as it is, saying so", () => {
    const dir = path.join(root, "shared");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    expect(ensurePrivateDir(dir)).toEqual({ created: false, openedTo: 0o055 });
    expect(modeOf(dir)).toBe(0o755);
    const file = path.join(dir, "keyring.json");
    writeFileSync(file, "{}", { mode: 0o644 });
    ensurePrivateFile(file);
    expect(modeOf(file)).toBe(0o600);
  });

  it("are only tightened, never created, when they need not exist", () => {
    const file = path.join(root, "catalog.db-wal");
    ensurePrivateFile(file, { mustExist: false });
    expect(() => statSync(file)).toThrow();
  });
});
