import { execFileSync } from "node:child_process";
import { cpSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startNode } from "./processes.js";

export const WORKSPACE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Bundles apps as `npm start` does and returns the path of each built main.js. The dashboard
 * page is only built when asked for ("dashboard"): test runners build concurrently.
 */
export function buildApps(...apps: string[]): Record<string, string> {
  const flags = apps.includes("dashboard") ? [] : ["--no-dashboard"];
  execFileSync(process.execPath, [path.join(WORKSPACE_ROOT, "tools", "build.mjs"), ...apps, ...flags], { stdio: "inherit" });
  return Object.fromEntries(apps.map((app) => [app, path.join(WORKSPACE_ROOT, "dist", app, "main.js")]));
}

/**
 * Starts a built app with one bad variable and returns its exit code and what it printed:
 * a bad configuration must stop start-up with one line naming the variable. `env`: what the
 * app needs to get that far (a distributed service's WHC_INTERNAL_TOKEN).
 */
export async function startWithBadConfig(app: string, variable: string, value: string, dataDir: string, env: Record<string, string> = {}) {
  const { [app]: main } = buildApps(app);
  const proc = startNode(main!, { WHC_DATA_DIR: dataDir, ...env, [variable]: value });
  const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
  return { code, lines: proc.output().trim().split("\n") };
}

/**
 * A copy of the built page (dist/dashboard) in `dir`, for a test's gateway to serve
 * (WHC_DASHBOARD_DIR): another runner building the page at the same moment empties
 * dist/dashboard first (Vite's emptyOutDir), and a page reloaded then would find nothing.
 */
export function dashboardCopy(dir: string): string {
  const copy = path.join(dir, "dashboard-page");
  cpSync(path.join(WORKSPACE_ROOT, "dist", "dashboard"), copy, { recursive: true });
  return copy;
}
