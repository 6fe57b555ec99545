import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { buildApps, freePort, tempDir } from "@whc/testing";

/**
 * The published CLI: `npm pack` of the bundle's directory, installed globally into a temporary
 * prefix with --offline (the package carries everything it runs with, so no registry is asked),
 * then the installed `whc` run from outside the repository.
 */
const exec = promisify(execFile);
let dir: ReturnType<typeof tempDir>;
let installed: string;

/** npm, as the developer's PATH finds it, with its cache and config kept inside the temp dir. */
function npm(args: string[], cwd: string) {
  return exec("npm", args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir.path,
      npm_config_cache: path.join(dir.path, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    },
  });
}

/** The installed whc, run with nothing of this repository on its way (cwd and HOME in the temp dir). */
async function whc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(installed, args, { cwd: dir.path, env: { PATH: process.env.PATH ?? "", HOME: dir.path, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  const main = buildApps("whc").whc!;
  dir = tempDir("whc-pack-");
  const { stdout } = await npm(["pack", path.dirname(main), "--pack-destination", dir.path, "--json"], dir.path);
  const [{ filename, files }] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  // The bundle and the manifest; no source map, no sources.
  expect(files.map((f) => f.path).sort()).toEqual(["main.js", "package.json"]);
  const prefix = path.join(dir.path, "prefix");
  await npm(["install", "--global", "--offline", "--prefix", prefix, path.join(dir.path, filename)], dir.path);
  installed = path.join(prefix, "bin", "whc");
  expect(readdirSync(path.join(prefix, "lib", "node_modules"))).toEqual(["webhook-capture-cli"]);
}, 120_000);

afterAll(() => {
  dir?.remove();
});

describe("the packed whc", () => {
  it("runs --help, with the exit-code table", async () => {
    const r = await whc(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: whc /);
    expect(r.stdout).toContain("Exit codes:");
    expect(r.stdout).toMatch(/^ +4 {2}the service could not answer/m);
  });

  it("runs events list --help, listing the filters", async () => {
    const r = await whc(["events", "list", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: whc events list \[options\] <endpoint>/);
    for (const option of ["--type", "--search", "--from", "--all", "--limit"]) expect(r.stdout).toContain(option);
  });

  it("reaches for the API with its bundled client: exit 4 when nothing answers, 3 without a key", async () => {
    const api = `http://127.0.0.1:${await freePort()}`;
    expect(await whc(["events", "export", "anything"], { WHC_API_URL: api, WHC_API_KEY: `whc_${"k".repeat(40)}` })).toMatchObject({
      code: 4,
      stderr: expect.stringContaining("unreachable"),
    });
    expect(await whc(["endpoints", "list"], { WHC_API_URL: api })).toMatchObject({ code: 3 });
  });

  it("says what the embedded store needs when better-sqlite3 is not installed beside it", async () => {
    const r = await whc(["keys", "create", "--account", "first", "--data-dir", dir.path]);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining("needs better-sqlite3") });
  });
});
