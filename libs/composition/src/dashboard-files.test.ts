import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let page: ReturnType<typeof tempDir>;
let withPage: TestSystem;
let withoutPage: TestSystem;

beforeAll(async () => {
  page = tempDir("whc-page-");
  mkdirSync(path.join(page.path, "assets"));
  writeFileSync(path.join(page.path, "index.html"), "<!doctype html><div id=app></div>");
  writeFileSync(path.join(page.path, "assets", "app-1.js"), "console.log(1)");
  withPage = await startTestSystem({ WHC_DASHBOARD_DIR: page.path });
  withoutPage = await startTestSystem({ WHC_DASHBOARD_DIR: path.join(page.path, "missing") });
});
afterAll(async () => {
  await withPage.stop();
  await withoutPage.stop();
  page.remove();
});

describe("the dashboard's files", () => {
  it("are served at / and /assets without credentials, under a strict policy", async () => {
    const index = await fetch(`${withPage.gatewayUrl}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toContain("text/html");
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    const asset = await fetch(`${withPage.gatewayUrl}/assets/app-1.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });

  it("answer not_found for anything else, and when no page was built", async () => {
    for (const p of ["/assets/missing.js", "/assets/..%2f..%2fetc%2fpasswd", "/nope.html", "/%00"]) {
      const res = await fetch(`${withPage.gatewayUrl}${p}`);
      expect(res.status, p).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe("not_found");
    }
    const res = await fetch(`${withoutPage.gatewayUrl}/`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toBe("not_found");
  });
});
