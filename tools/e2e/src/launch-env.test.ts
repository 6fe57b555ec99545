import { describe, it, expect } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_IN_ONE_LAUNCH_ENV, LAUNCH_ENV, LAUNCH_NODE_ARGS, launchEnvOf } from "@whc/testing";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

/**
 * The tests start processes as launchEnvOf says (startNode), and the flood test's memory bounds
 * hold only with it: every way a user starts the project must set the same, or the tests would
 * measure a process nobody runs.
 */
describe("every launcher sets what the tests start processes with", () => {
  const common = Object.entries(LAUNCH_ENV);
  const allInOne = Object.entries(ALL_IN_ONE_LAUNCH_ENV);
  const runtime = read("Dockerfile").split(/^FROM .* AS runtime$/m)[1] ?? "";

  it("has something to check", () => {
    expect(LAUNCH_NODE_ARGS).toEqual(["--initial-old-space-size=128"]);
    expect(common).toContainEqual(["MALLOC_MMAP_THRESHOLD_", "131072"]);
    expect(allInOne).toContainEqual(["NODE_OPTIONS", "--max-semi-space-size=64"]);
    expect(launchEnvOf("/x/dist/all-in-one/main.js")).toEqual({ ...LAUNCH_ENV, ...ALL_IN_ONE_LAUNCH_ENV });
    expect(launchEnvOf("/x/dist/catalog/main.js")).toEqual(LAUNCH_ENV);
  });

  it.each([...common, ...allInOne])("npm start sets %s=%s for the all-in-one process", (name, value) => {
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts.start ?? "";
    // Its assignments, in any order, before the command that starts the process.
    expect(start).toMatch(new RegExp(`(^|&& )(\\S+=\\S+ )*${name}=${value} (\\S+=\\S+ )*node [^&]*dist/all-in-one/main\\.js$`));
  });

  it.each([...LAUNCH_NODE_ARGS])("npm start passes %s to node before the all-in-one's script", (arg) => {
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts.start ?? "";
    expect(start).toMatch(new RegExp(`&& (\\S+=\\S+ )*node (\\S+ )*${arg.replaceAll("-", "\\-")} (\\S+ )*dist/all-in-one/main\\.js$`));
  });

  it("npm run start:distributed, the image's entry point (so docker-compose and Kubernetes) and the benchmarks pass the node options", () => {
    expect(read("tools/run-distributed.mjs")).toContain(`const NODE_ARGS = ${JSON.stringify(LAUNCH_NODE_ARGS)};`);
    expect(read("tools/run-distributed.mjs")).toContain(`"--enable-source-maps", ...NODE_ARGS, path.join(root, "dist", name, "main.js")`);
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(runtime)?.[1] ?? "[]") as string[];
    expect(entrypoint).toEqual(["node", "--enable-source-maps", ...LAUNCH_NODE_ARGS]);
    // Their services keep the image's entry point: they name the script only.
    expect(read("docker-compose.yml")).not.toMatch(/^\s*entrypoint:/m);
    const base = path.join(root, "deploy/kubernetes/base");
    for (const f of readdirSync(base, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".yaml"))) {
      expect(read(path.join("deploy/kubernetes/base", f)), f).not.toMatch(/^\s*command:/m);
    }
    expect(read("tools/bench/harness.mjs")).toContain(`export const LAUNCH_NODE_ARGS = ${JSON.stringify(LAUNCH_NODE_ARGS)};`);
  });

  it.each(common)("npm run start:distributed sets %s=%s for the five services", (name, value) => {
    expect(read("tools/run-distributed.mjs")).toContain(`env.${name} ??= "${value}";`);
  });

  it.each(allInOne)("npm run start:distributed leaves %s unset (the all-in-one's alone)", (name) => {
    expect(read("tools/run-distributed.mjs")).not.toMatch(new RegExp(`env\\.${name}\\b`));
  });

  it.each(common)("the image sets %s=%s for whichever service it runs", (name, value) => {
    expect(runtime).toMatch(new RegExp(`^ENV .*\\b${name}=${value}\\b`, "m"));
  });

  it("the image's default command, the all-in-one process, runs with the all-in-one's V8 options; no service's command does", () => {
    const options = (ALL_IN_ONE_LAUNCH_ENV.NODE_OPTIONS ?? "").split(" ");
    expect(runtime).not.toMatch(/^ENV .*NODE_OPTIONS/m);
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)?.[1] ?? "[]") as string[];
    expect(cmd).toEqual([...options, "dist/all-in-one/main.js"]);
    const compose = read("docker-compose.yml");
    expect(compose).toMatch(/command: \["dist\/catalog\/main\.js"\]/);
    expect(compose).not.toContain("max-semi-space-size");
  });

  it("the Kubernetes all-in-one runs with the all-in-one's V8 options; the services' deployments without", () => {
    const options = (ALL_IN_ONE_LAUNCH_ENV.NODE_OPTIONS ?? "").split(" ");
    expect(read("deploy/kubernetes/base/all-in-one/all-in-one.yaml")).toContain(`args: ${JSON.stringify([...options, "dist/all-in-one/main.js"]).replaceAll(",", ", ")}`);
    const base = path.join(root, "deploy/kubernetes/base");
    const services = readdirSync(base, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".yaml") && !f.startsWith("all-in-one"));
    expect(services.length).toBeGreaterThan(0);
    for (const f of services) expect(read(path.join("deploy/kubernetes/base", f)), f).not.toContain("max-semi-space-size");
  });

  it.each([...common, ...allInOne])("the benchmarks start the all-in-one process with %s=%s", (name, value) => {
    expect(read("tools/bench/harness.mjs")).toContain(`${name}: "${value}"`);
  });
});
