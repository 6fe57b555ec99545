import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export function tempDir(prefix = "whc-test-"): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
