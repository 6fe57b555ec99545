import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { createApiClient, type ApiClient, type ForwardedResponseJson } from "@whc/api-model";
import { buildApps, dashboardCopy, freePort, startNode, tempDir, WORKSPACE_ROOT, type RunningProcess } from "@whc/testing";

/**
 * The dashboard's forwarding (design §11) in headless Chromium against the all-in-one process:
 * the forward settings on the endpoint form, the forward state badge in the list, an event's
 * attempts, and Redeliver. The destination is a local server; retries are shortened by
 * configuration.
 */

const CHROMIUM = process.env.WHC_CHROMIUM ?? "/usr/bin/chromium";
const KEY = `whc_${"F".repeat(20)}${"4".repeat(20)}`;
const ARTIFACTS = path.join(WORKSPACE_ROOT, "tools", "e2e", "artifacts");

let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let browser: Browser;
let page: Page;
let gatewayUrl: string;
let api: ApiClient;
let destination: http.Server;
let destinationUrl: string;
/** What the destination answers next; 200 once these are used up. */
const answers: number[] = [];
const received: { url: string; attempt: string | undefined; body: string }[] = [];

async function shot(name: string) {
  await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-forwarding-${name}.png`), fullPage: true });
}

async function openEndpoint(slug: string) {
  await page.reload();
  await page.getByTestId(`endpoint-${slug}`).getByRole("link").click();
  await page.getByTestId("status-switch").waitFor();
}

/** Opens one event of the endpoint shown on its deliveries tab. */
async function openEvent(id: string) {
  const row = page.locator(`[data-testid="event-row"][data-event-id="${id}"]`);
  await row.waitFor({ timeout: 5000 });
  await row.getByRole("link").click();
  await page.locator(`[data-testid="detail"][data-event-id="${id}"]`).waitFor({ timeout: 5000 });
  await page.getByTestId("event-tab-deliveries").click();
  await page.getByTestId("forwarding").waitFor();
}

async function deliveryOf(endpointId: string, eventId: string): Promise<ForwardedResponseJson | undefined> {
  const fr = (await api.events.get(endpointId, eventId)).forwardedResponse as Partial<ForwardedResponseJson>;
  return fr.state ? (fr as ForwardedResponseJson) : undefined;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const mains = buildApps("all-in-one", "dashboard");
  dir = tempDir("whc-dashboard-forwarding-");
  const [gw, ing] = [await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gw}`;
  server = startNode(mains["all-in-one"]!, {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ing}`,
    WHC_BOOTSTRAP_API_KEYS: `forwarders:${KEY}`,
    // The destination is on loopback.
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "100",
    WHC_FORWARD_POLL_MS: "50",
    WHC_DASHBOARD_DIR: dashboardCopy(dir.path),
  });
  await server.waitForOutput(/webhook-capture ready/);
  api = createApiClient({ baseUrl: gatewayUrl, apiKey: KEY });
  destination = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ url: req.url!, attempt: req.headers["x-whc-attempt"] as string | undefined, body: Buffer.concat(chunks).toString() });
      const status = answers.shift() ?? 200;
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "taken, thanks" : "try again later");
    });
  });
  await new Promise<void>((r) => destination.listen(0, "127.0.0.1", r));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/hooks`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await (await browser.newContext({ viewport: { width: 1600, height: 1000 } })).newPage();
  await page.goto(gatewayUrl);
  await page.getByTestId("api-key").fill(KEY);
  await page.getByTestId("use-key").click();
  await page.getByTestId("new-endpoint").waitFor();
});

afterAll(async () => {
  await browser?.close();
  destination?.close();
  await server?.stop();
  dir?.remove();
});

describe("forwarding in the dashboard", () => {
  it("makes an endpoint a relay through the edit form; the target secret is write-only", async () => {
    const ep = await api.endpoints.create({ slug: "to-relay" });
    await openEndpoint("to-relay");
    await page.getByTestId("tab-settings").click();
    expect(await page.getByTestId("forward-settings").isHidden()).toBe(true);

    await page.getByTestId("edit-mode").selectOption("relay");
    await page.getByTestId("edit-forward-url").fill(destinationUrl);
    await page.getByTestId("edit-forward-timeout").fill("2000");
    await page.getByTestId("edit-forward-max-attempts").fill("3");
    await page.getByTestId("edit-forward-secret").fill("whsec_for_the_destination");
    await shot("1-relay-form");
    await page.getByTestId("save-endpoint").click();
    await expect.poll(() => page.getByTestId("forward-secret-state").textContent()).toMatch(/^target secret set/);
    expect(await api.endpoints.get(ep.id)).toMatchObject({
      operatingMode: "relay",
      forward: { url: destinationUrl, keepPath: true, timeoutMs: 2000, maxAttempts: 3, targetSecretSet: true },
    });
    expect(await page.getByTestId("edit-forward-secret").inputValue()).toBe("");

    await page.getByTestId("edit-forward-remove-secret").check();
    await page.getByTestId("save-endpoint").click();
    await expect.poll(() => page.getByTestId("forward-secret-state").textContent()).toMatch(/^no target secret/);
    expect((await api.endpoints.get(ep.id)).forward).toMatchObject({ url: destinationUrl, targetSecretSet: false });
    await page.getByTestId("save-endpoint").click();
    await expect.poll(() => page.getByTestId("edit-outcome").textContent()).toBe("Nothing changed.");
  });

  it("shows a relay event's badge and attempts; Redeliver adds an attempt", async () => {
    const ep = await api.endpoints.create({
      slug: "relaying",
      operatingMode: "relay",
      forward: { url: destinationUrl, maxAttempts: 4 },
    });
    answers.push(500);
    const res = await fetch(`${ep.webhookUrl}/orders?id=7`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"type":"order.paid"}' });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    // First answered 500, then delivered by the retry.
    await expect.poll(async () => (await deliveryOf(ep.id, id))?.state, { timeout: 10_000 }).toBe("delivered");

    await openEndpoint("relaying");
    const row = page.locator(`[data-testid="event-row"][data-event-id="${id}"]`);
    await expect.poll(() => row.getByTestId("forward-badge").textContent()).toBe("→ delivered");
    await openEvent(id);
    expect(await page.getByTestId("forward-state").textContent()).toBe("delivered");
    const attempts = page.getByTestId("forward-attempt");
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toMatch(/#1\s*initial.*HTTP 500/);
    expect(await attempts.nth(1).textContent()).toMatch(/#2\s*retry.*HTTP 200/);
    await attempts.nth(0).locator("summary").click();
    expect(await attempts.nth(0).getByTestId("attempt-body").textContent()).toBe("try again later");
    expect(await attempts.nth(0).textContent()).toContain(`${destinationUrl}/orders?id=7`);
    await shot("2-attempts");

    await page.getByTestId("redeliver").click();
    await expect.poll(() => page.getByTestId("forward-attempt").count()).toBe(3);
    expect(await page.getByTestId("forward-attempt").nth(2).textContent()).toMatch(/#3\s*manual.*HTTP 200/);
    expect(received.filter((r) => r.url === "/hooks/orders?id=7").map((r) => r.attempt)).toEqual(["1", "2", "3"]);
    expect(received.at(-1)!.body).toBe('{"type":"order.paid"}');
    await shot("3-redelivered");
  });

  it("filters the list on the forward state", async () => {
    const ep = await api.endpoints.create({ slug: "filtering", operatingMode: "relay", forward: { url: destinationUrl, maxAttempts: 1 } });
    answers.push(404);
    const failed = (await (await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"will.fail"}' })).json()) as { id: string };
    await expect.poll(async () => (await deliveryOf(ep.id, failed.id))?.state, { timeout: 10_000 }).toBe("failed");
    const delivered = (await (await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"will.arrive"}' })).json()) as { id: string };
    await expect.poll(async () => (await deliveryOf(ep.id, delivered.id))?.state, { timeout: 10_000 }).toBe("delivered");

    await openEndpoint("filtering");
    await expect.poll(() => page.getByTestId("event-row").count()).toBe(2);
    await page.getByTestId("filter-forward").selectOption("failed");
    await page.getByTestId("apply-filters").click();
    await expect.poll(() => page.getByTestId("event-row").count()).toBe(1);
    expect(await page.getByTestId("event-row").first().getAttribute("data-event-id")).toBe(failed.id);
    expect(await page.getByTestId("forward-badge").first().textContent()).toBe("→ failed");
  });
});
