import { describe, it, expect, beforeAll } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { WORKSPACE_ROOT } from "@whc/testing";

/**
 * The GitHub workflow read as data: what its jobs run is checked against the repository, so the
 * MongoDB job cannot drift into running nothing (a renamed project, a moved test file, a dropped
 * variable) and `nx affected` keeps meaning every project's lint, typecheck and test.
 */

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  "working-directory"?: string;
}
interface Job {
  strategy?: { matrix?: { node?: number[] } };
  services?: Record<string, { image: string; ports?: string[] }>;
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: { pull_request?: unknown; push?: { branches?: string[] } };
  jobs: Record<string, Job>;
}

const WORKFLOW = path.join(WORKSPACE_ROOT, ".github", "workflows", "ci.yml");
const workflow = parse(readFileSync(WORKFLOW, "utf8")) as Workflow;
const jobs = Object.values(workflow.jobs);

const runs = (job: Job) => job.steps.flatMap((s) => (s.run ? [{ ...s, run: s.run }] : []));
const stepIndex = (job: Job, pattern: RegExp) => job.steps.findIndex((s) => pattern.test(s.run ?? "") || pattern.test(s.uses ?? ""));
const servicesJob = () => {
  const found = jobs.filter((j) => j.services?.mongo && j.services?.nats);
  expect(found, "one job with mongo and nats service containers").toHaveLength(1);
  return found[0]!;
};

/** Every test file under a folder, recursively. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

function nx(...args: string[]): string {
  return execFileSync(process.execPath, [path.join(WORKSPACE_ROOT, "node_modules", "nx", "dist", "bin", "nx.js"), ...args], {
    cwd: WORKSPACE_ROOT,
    env: { ...process.env, NX_DAEMON: "false", NX_NO_CLOUD: "true" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Project name -> root and target names, as nx itself sees them (plugins and targetDefaults applied). */
function nxProjects(): Record<string, { root: string; targets: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "whc-nx-graph-"));
  try {
    const file = path.join(dir, "graph.json");
    nx("graph", `--file=${file}`);
    const graph = JSON.parse(readFileSync(file, "utf8")) as {
      graph: { nodes: Record<string, { data: { root: string; targets?: Record<string, unknown> } }> };
    };
    return Object.fromEntries(
      Object.entries(graph.graph.nodes).map(([name, node]) => [name, { root: node.data.root, targets: Object.keys(node.data.targets ?? {}) }]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the GitHub workflow (.github/workflows/ci.yml)", () => {
  it("runs on pull requests and on pushes to main", () => {
    expect(workflow.on.pull_request).not.toBeUndefined();
    expect(workflow.on.push?.branches).toContain("main");
  });

  it("runs nx affected for lint, typecheck and test between the base and head nx-set-shas finds, on Node 22 and 24", () => {
    const affected = jobs.filter((j) => runs(j).some((s) => /\bnx affected\b/.test(s.run)));
    expect(affected).toHaveLength(1);
    const job = affected[0]!;
    const command = runs(job).find((s) => /\bnx affected\b/.test(s.run))!.run;
    const targets = command.match(/(?:-t|--targets?)[ =]([\w,-]+(?: [\w-]+)*)/)?.[1]?.split(/[ ,]/) ?? [];
    expect(targets).toEqual(expect.arrayContaining(["lint", "typecheck", "test"]));
    expect(command).toMatch(/--base="?\$NX_BASE"?/);
    expect(command).toMatch(/--head="?\$NX_HEAD"?/);
    // The history is there, and the SHAs are set before the command uses them.
    expect(job.steps.find((s) => s.uses?.startsWith("actions/checkout@"))?.with?.["fetch-depth"]).toBe(0);
    const shas = stepIndex(job, /^nrwl\/nx-set-shas@/);
    expect(shas).toBeGreaterThanOrEqual(0);
    expect(shas).toBeLessThan(stepIndex(job, /\bnx affected\b/));
    expect(job.strategy?.matrix?.node).toEqual(expect.arrayContaining([22, 24]));
    expect(job.steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"]).toBe("${{ matrix.node }}");
  });

  it("runs the catalog contract suite against the mongo service, and the distributed e2e with that MongoDB and NATS", () => {
    const job = servicesJob();
    expect(job.env?.WHC_TEST_MONGODB_URI).toMatch(/^mongodb:\/\/127\.0\.0\.1:27017\//);
    expect(job.env?.WHC_NATS_URL).toBe("nats://127.0.0.1:4222");
    expect(job.services!.mongo!.ports).toContain("27017:27017");
    expect(job.services!.nats!.ports).toContain("4222:4222");
    expect(job.strategy?.matrix?.node).toEqual(expect.arrayContaining([22, 24]));

    // The contract suite: the project the step tests holds the test file that runs it on MongoDB.
    const contract = runs(job).find((s) => /\bnx run [\w-]+:test\b/.test(s.run));
    const project = contract?.run.match(/\bnx run ([\w-]+):test\b/)?.[1];
    expect(project).toBe("catalog-mongo");
    const suites = testFiles(path.join(WORKSPACE_ROOT, "libs", project!)).filter((f) => {
      const text = readFileSync(f, "utf8");
      return text.includes("catalogStoreContract(") && /externalServices\(\)\.mongodbUri|WHC_TEST_MONGODB_URI/.test(text);
    });
    expect(suites.length).toBeGreaterThan(0);

    // The distributed e2e: the files the step names exist here, one of them starts the five services.
    const e2e = runs(job).find((s) => /\bvitest run\b/.test(s.run) && s["working-directory"] === "tools/e2e");
    const files = (e2e?.run.split(/\s+/) ?? []).filter((word) => word.endsWith(".test.ts"));
    expect(files.length).toBeGreaterThan(0);
    const sources = files.map((file) => path.join(WORKSPACE_ROOT, "tools", "e2e", file));
    for (const source of sources) expect(existsSync(source), source).toBe(true);
    expect(sources.some((source) => /\bstartCluster\(/.test(readFileSync(source, "utf8")))).toBe(true);

    // JetStream is switched on before anything uses NATS.
    const jetstream = stepIndex(job, /js-enabled-only=true/);
    expect(jetstream).toBeGreaterThanOrEqual(0);
    expect(jetstream).toBeLessThan(stepIndex(job, /\bnx run catalog-mongo:test\b/));
  });

  it("is valid for GitHub (action-validator, as .ci/run checks it)", () => {
    const bin = path.join(WORKSPACE_ROOT, "node_modules", ".bin", "action-validator");
    expect(() => execFileSync(bin, [WORKFLOW], { stdio: "pipe" })).not.toThrow();
  });
});

describe("nx projects", () => {
  let projects: ReturnType<typeof nxProjects>;
  beforeAll(() => {
    projects = nxProjects();
  }, 60_000);

  it("each have lint, typecheck and test targets, so that nx affected checks every project a change reaches", () => {
    expect(Object.keys(projects).length).toBeGreaterThan(30);
    const missing = Object.entries(projects)
      .filter(([, p]) => !["lint", "typecheck", "test"].every((t) => p.targets.includes(t)))
      .map(([name, p]) => `${name}: ${p.targets.join(",")}`);
    expect(missing).toEqual([]);
  });

  it("a change reaches the projects that depend on it, imports and built apps alike", () => {
    const affectedBy = (file: string) => JSON.parse(nx("show", "projects", "--affected", `--files=${file}`, "--json")) as string[];
    // Imported: every service and the e2e use the error library.
    expect(affectedBy("libs/errors/src/index.ts")).toEqual(expect.arrayContaining(["errors", "gateway-core", "gateway", "all-in-one", "e2e"]));
    // Built and started by tests (implicitDependencies): the CLI and dashboard tests run the all-in-one process.
    expect(affectedBy("apps/all-in-one/src/main.ts")).toEqual(expect.arrayContaining(["all-in-one", "whc", "dashboard", "e2e"]));
    // And not the other way round.
    expect(affectedBy("apps/whc/src/main.ts")).not.toContain("all-in-one");
  });
});
