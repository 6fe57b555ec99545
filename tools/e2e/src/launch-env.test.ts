import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LAUNCH_ENV } from "@whc/testing";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

/**
 * The tests start processes with LAUNCH_ENV (startNode), and the flood test's memory bounds hold
 * only with it: every way a user starts the project must set the same, or the tests would
 * measure a process nobody runs.
 */
describe("every launcher sets what the tests start processes with", () => {
  const entries = Object.entries(LAUNCH_ENV);

  it("has something to check", () => {
    expect(entries).toContainEqual(["MALLOC_MMAP_THRESHOLD_", "131072"]);
  });

  it.each(entries)("npm start sets %s=%s for the all-in-one process", (name, value) => {
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts.start ?? "";
    expect(start).toMatch(new RegExp(`(^|&& )${name}=${value} node [^&]*dist/all-in-one/main\\.js$`));
  });

  it.each(entries)("npm run start:distributed sets %s=%s for the five services", (name, value) => {
    expect(read("tools/run-distributed.mjs")).toContain(`env.${name} ??= "${value}";`);
  });

  it.each(entries)("the image sets %s=%s for whichever service it runs", (name, value) => {
    const runtime = read("Dockerfile").split(/^FROM .* AS runtime$/m)[1] ?? "";
    expect(runtime).toMatch(new RegExp(`^ENV .*\\b${name}=${value}\\b`, "m"));
  });

  it.each(entries)("the benchmarks start what they measure with %s=%s", (name, value) => {
    expect(read("tools/bench/harness.mjs")).toContain(`${name}: "${value}"`);
  });
});
