import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

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
