import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import Stripe from "stripe";
import { createApiClient, type ApiClient, type EndpointJson } from "@whc/api-model";
import { buildApps, dashboardCopy, freePort, startNode, tempDir, WORKSPACE_ROOT, type RunningProcess } from "@whc/testing";

/**
 * Every main view of the dashboard at a laptop's width and a phone's, in headless Chromium
 * against the all-in-one process: a screenshot of each (tools/e2e/artifacts/dashboard-view-*),
 * nothing wider than the viewport, and no serious or critical axe-core violation. Then the
 * address: a link opened in a fresh browser shows the same endpoint, event and tab once the key
 * is entered, and a reload keeps it; and the keyboard: j/k, Enter, /.
 */

const CHROMIUM = process.env.WHC_CHROMIUM ?? "/usr/bin/chromium";
const KEY = `whc_${"V".repeat(20)}${"7".repeat(20)}`;
const ARTIFACTS = path.join(WORKSPACE_ROOT, "tools", "e2e", "artifacts");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WIDTHS = [1366, 390] as const;

let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let browser: Browser;
let gatewayUrl: string;
let api: ApiClient;
let destination: http.Server;
/** What the destination answers next; 200 once these are used up. */
const answers: number[] = [];

const seeded = {} as {
  main: EndpointJson;
  single: EndpointJson;
  empty: EndpointJson;
  stripe: EndpointJson;
  relay: EndpointJson;
  jsonEvent: string;
  binaryEvent: string;
  failedEvent: string;
  relayEvent: string;
  duplicateEvent: string;
  shapes: EndpointJson;
  driftEvent: string;
};

async function capture(url: string, init: RequestInit): Promise<string> {
  const res = await fetch(url, init);
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function seed(): Promise<void> {
  seeded.main = await api.endpoints.create({ slug: "github-main", displayName: "GitHub main", provider: "github" });
  seeded.single = await api.endpoints.create({ slug: "just-one", displayName: "Just one" });
  seeded.empty = await api.endpoints.create({ slug: "brand-new", displayName: "Brand new" });
  seeded.stripe = await api.endpoints.create({ slug: "stripe-live", displayName: "Stripe (live)", provider: "stripe", secret: "whsec_the_endpoint_secret" });
  seeded.relay = await api.endpoints.create({
    slug: "orders-relay",
    displayName: "Orders relay",
    operatingMode: "relay",
    forward: { url: `http://127.0.0.1:${(destination.address() as AddressInfo).port}/hooks`, maxAttempts: 3 },
  });
  await capture(seeded.single.webhookUrl, { method: "POST", body: "{}" });
  for (let i = 0; i < 12; i++) {
    const body = JSON.stringify({ action: i % 2 ? "opened" : "closed", number: i, pull_request: { title: "A title long enough to need room", labels: ["bug", "ui"], user: { login: "octocat" } } });
    const id = await capture(`${seeded.main.webhookUrl}/ci/pulls/${i}?ref=main&verbose=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "pull_request", authorization: "Bearer sender-token" },
      body,
    });
    if (i === 11) seeded.jsonEvent = id;
  }
  seeded.binaryEvent = await capture(`${seeded.main.webhookUrl}/upload`, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: Uint8Array.from({ length: 300 }, (_, i) => (i * 37) % 256),
  });
  const payload = JSON.stringify({ id: "evt_views", object: "event", type: "charge.refunded" });
  const header = new Stripe("sk_test_x").webhooks.generateTestHeaderString({ payload, secret: "whsec_a_different_secret" });
  seeded.failedEvent = await capture(seeded.stripe.webhookUrl, { method: "POST", headers: { "stripe-signature": header, "content-type": "application/json" }, body: payload });
  // An endpoint with a learned schema (design §19) and one capture that drifted from it.
  seeded.shapes = await api.endpoints.create({ slug: "order-shapes", displayName: "Order shapes" });
  const order = (i: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type: "order.paid", id: `ord_${i}`, total: 100 + i, lines: [{ sku: `sku-${i}`, quantity: 1 }], customer: { id: `cus_${i}` }, ...extra });
  for (let i = 0; i < 20; i++) await capture(seeded.shapes.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: order(i) });
  seeded.driftEvent = await capture(seeded.shapes.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: order(20, { total: "120.00", coupon: "SPRING" }) });
  for (let tries = 0; (await api.schemas.list(seeded.shapes.id)).items[0]?.samples !== 21; tries++) {
    if (tries > 100) throw new Error("the shapes were never learned");
    await new Promise((r) => setTimeout(r, 100));
  }
  answers.push(500);
  seeded.relayEvent = await capture(`${seeded.relay.webhookUrl}/orders?id=7`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"type":"order.paid"}' });
  // First answered 500, then delivered by the retry: two attempts on the timeline.
  for (let tries = 0; (await api.events.get(seeded.relay.id, seeded.relayEvent)).forwardState !== "delivered"; tries++) {
    if (tries > 100) throw new Error("the relay event was never delivered");
    await new Promise((r) => setTimeout(r, 100));
  }
  // A provider's retry of the relay's event, recognised by the endpoint's deduplication (design §17).
  await api.endpoints.update(seeded.relay.id, { dedupe: { windowSeconds: 600, fields: ["body.type"] } });
  await capture(`${seeded.relay.webhookUrl}/orders?id=7`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"type":"order.shipped"}' });
  seeded.duplicateEvent = await capture(`${seeded.relay.webhookUrl}/orders?id=7`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"type":"order.shipped"}' });
  // Two alert channels, one restricted to an endpoint, the other with a test alert delivered.
  await api.alerts.create({ name: "on-call", type: "slack", url: "https://hooks.slack.example.test/services/T0/B0/x", events: ["signature.failed", "delivery.exhausted"], endpointIds: [seeded.stripe.id] });
  const pager = await api.alerts.create({ name: "pager", type: "webhook", url: `http://127.0.0.1:${(destination.address() as AddressInfo).port}/alerts`, events: ["delivery.exhausted"] });
  const { alertId } = await api.alerts.test(pager.id);
  for (let tries = 0; (await api.alerts.list()).items.find((c) => c.id === pager.id)?.lastDelivery?.alertId !== alertId; tries++) {
    if (tries > 100) throw new Error("the test alert was never delivered");
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const mains = buildApps("all-in-one", "dashboard");
  dir = tempDir("whc-dashboard-views-");
  const [gw, ing] = [await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gw}`;
  server = startNode(mains["all-in-one"]!, {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ing}`,
    WHC_BOOTSTRAP_API_KEYS: `views:${KEY}`,
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "100",
    WHC_FORWARD_POLL_MS: "50",
    WHC_DASHBOARD_DIR: dashboardCopy(dir.path),
  });
  await server.waitForOutput(/webhook-capture ready/);
  api = createApiClient({ baseUrl: gatewayUrl, apiKey: KEY });
  destination = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const status = answers.shift() ?? 200;
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "taken, thanks" : "try again later");
    });
  });
  await new Promise<void>((r) => destination.listen(0, "127.0.0.1", r));
  await seed();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

afterAll(async () => {
  await browser?.close();
  destination?.close();
  await server?.stop();
  dir?.remove();
});

/** A fresh browser (its own session storage) at `width`. */
async function freshPage(width: number): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 850 } });
  const page = await context.newPage();
  return { context, page };
}

async function logIn(page: Page): Promise<void> {
  await page.getByTestId("api-key").fill(KEY);
  await page.getByTestId("use-key").click();
  await page.getByTestId("new-endpoint").waitFor();
}

/**
 * Visible elements whose right edge passes the viewport. An element inside a scrolling or
 * clipping box whose own edge is inside the viewport is not seen past it (a wide hex dump
 * scrolls inside its pane), so it does not count.
 */
async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(OVERFLOW);
}

/** Runs in the page (this project's type check has no DOM): the finding of `overflow`. */
const OVERFLOW = `(() => {
  const width = innerWidth;
  const found = [];
  const scrollWidth = document.scrollingElement.scrollWidth;
  if (scrollWidth > width) found.push("the page scrolls sideways: " + scrollWidth + " > " + width);
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= width + 0.5 || getComputedStyle(el).visibility === "hidden") continue;
    let clipped = false;
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).overflowX === "visible") continue;
      clipped = a.getBoundingClientRect().right <= width + 0.5;
      break;
    }
    if (!clipped) found.push(el.tagName.toLowerCase() + "." + el.className + " [" + (el.dataset.testid || "") + "] ends at " + Math.round(r.right));
  }
  return found;
})()`;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations (injected over the debugging protocol, which the page's policy does not govern). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`);
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")})`);
}

/** Screenshot, overflow and accessibility of the view shown. */
async function check(page: Page, view: string, width: number): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-view-${view}-${width}.png`), fullPage: width < 768 });
  expect(await overflow(page), `${view} at ${width} px`).toEqual([]);
  expect(await axeViolations(page), `${view} at ${width} px`).toEqual([]);
}

interface View {
  name: string;
  hash: () => string;
  /** What shows when the view is ready. */
  ready: (page: Page) => Promise<unknown>;
  after?: (page: Page) => Promise<void>;
}

const event = (ep: () => EndpointJson, id: () => string, rest = "") => () => `#/endpoints/${ep().id}/events/${id()}${rest}`;

const VIEWS: View[] = [
  {
    name: "endpoints",
    hash: () => "#/",
    ready: async (page) => {
      await page.getByTestId("endpoint-github-main").waitFor();
      expect(await page.getByTestId("endpoint-just-one").getByTestId("event-count").textContent()).toBe("1 event");
      expect(await page.getByTestId("endpoint-github-main").getByTestId("event-count").textContent()).toBe("13 events");
    },
  },
  { name: "new-endpoint", hash: () => "#/new", ready: (page) => page.getByTestId("create-endpoint").waitFor() },
  {
    name: "empty-endpoint",
    hash: () => `#/endpoints/${seeded.empty.id}`,
    ready: async (page) => expect.poll(() => page.getByTestId("snippet-curl").textContent()).toContain(seeded.empty.webhookUrl),
  },
  {
    name: "event-table",
    hash: () => `#/endpoints/${seeded.main.id}`,
    ready: async (page) => {
      await expect.poll(() => page.getByTestId("event-row").count()).toBe(13);
      // The sub-paths come a moment after the rows.
      await expect.poll(() => page.locator(`[data-event-id="${seeded.jsonEvent}"] .path`).textContent()).toBe("/ci/pulls/11?ref=main&verbose=true");
    },
  },
  {
    name: "event-tree",
    hash: event(() => seeded.main, () => seeded.jsonEvent),
    ready: async (page) => {
      await page.getByTestId("json-tree").waitFor();
      expect(await page.getByTestId("json-tree").textContent()).toContain('"login": "octocat"');
    },
  },
  {
    name: "event-raw",
    hash: event(() => seeded.main, () => seeded.jsonEvent, "?view=raw"),
    ready: async (page) => expect.poll(() => page.getByTestId("body").textContent()).toMatch(/^\{"action":"opened","number":11/),
  },
  {
    name: "event-hex",
    hash: event(() => seeded.main, () => seeded.binaryEvent, "?view=hex"),
    ready: async (page) => expect.poll(() => page.getByTestId("body").textContent()).toMatch(/^00000000 {2}00 25 4a 6f/),
  },
  {
    name: "event-headers",
    hash: event(() => seeded.main, () => seeded.jsonEvent, "/headers"),
    ready: async (page) => {
      await page.getByTestId("headers").waitFor();
      expect(await page.getByTestId("headers").textContent()).toContain("[MASKED]");
      expect(await page.getByTestId("headers").textContent()).not.toContain("sender-token");
    },
  },
  {
    name: "event-diagnosis",
    hash: event(() => seeded.stripe, () => seeded.failedEvent, "/diagnosis"),
    ready: async (page) => expect.poll(() => page.getByTestId("likely-cause-title").textContent()).toBe("Signed with a different secret"),
  },
  {
    name: "event-deliveries",
    hash: event(() => seeded.relay, () => seeded.relayEvent, "/deliveries"),
    ready: async (page) => expect.poll(() => page.getByTestId("forward-attempt").count()).toBe(2),
  },
  {
    name: "replay-dialog",
    hash: event(() => seeded.main, () => seeded.jsonEvent),
    ready: async (page) => {
      await page.getByTestId("open-replay").click();
      await page.getByTestId("replay-url").waitFor();
    },
    after: (page) => page.getByTestId("close-replay").click(),
  },
  {
    name: "replay-edits",
    hash: event(() => seeded.main, () => seeded.jsonEvent),
    ready: async (page) => {
      await page.getByTestId("open-replay").click();
      await page.getByTestId("replay-edits").locator("summary").click();
      await page.getByTestId("edit-set-headers").waitFor();
    },
    after: (page) => page.getByTestId("close-replay").click(),
  },
  {
    name: "compare-dialog",
    hash: event(() => seeded.main, () => seeded.jsonEvent),
    ready: async (page) => {
      await page.getByTestId("open-diff").click();
      await page.getByTestId("diff-with").waitFor();
    },
    after: (page) => page.keyboard.press("Escape"),
  },
  { name: "listeners", hash: () => `#/endpoints/${seeded.main.id}/listeners`, ready: (page) => page.getByTestId("no-listeners").waitFor() },
  {
    name: "event-duplicate",
    hash: event(() => seeded.relay, () => seeded.duplicateEvent),
    ready: (page) => page.getByTestId("duplicate-of").waitFor(),
  },
  {
    name: "event-history",
    hash: event(() => seeded.relay, () => seeded.relayEvent, "/history"),
    ready: (page) => page.getByTestId("history-row").first().waitFor(),
  },
  {
    name: "destinations",
    hash: () => `#/endpoints/${seeded.relay.id}/destinations`,
    ready: async (page) => expect.poll(() => page.getByTestId("destination-row").count()).toBe(1),
  },
  {
    name: "destination-editor",
    hash: () => `#/endpoints/${seeded.relay.id}/destinations`,
    ready: async (page) => {
      await page.getByTestId("destination-edit").click();
      await page.getByTestId("destination-filter").fill('{"eventType": "order.paid"}');
      await page.getByTestId("destination-test-event").selectOption(seeded.relayEvent);
      await page.getByTestId("destination-test").click();
      await page.getByTestId("destination-test-request").waitFor();
    },
  },
  { name: "endpoint-settings", hash: () => `#/endpoints/${seeded.relay.id}/settings`, ready: (page) => page.getByTestId("edit-forward-url").waitFor() },
  {
    name: "charts",
    hash: () => `#/endpoints/${seeded.main.id}/charts`,
    ready: async (page) => {
      await page.getByTestId("chart-captures").waitFor();
      expect(await page.getByTestId("chart-captures").textContent()).toContain("13 captures");
      expect(await page.getByTestId("chart-capped").count()).toBe(0);
    },
  },
  {
    name: "schemas",
    hash: () => `#/endpoints/${seeded.shapes.id}/schemas`,
    ready: async (page) => {
      await page.getByTestId("schema").waitFor();
      expect(await page.getByTestId("schema-samples").textContent()).toBe("21 samples");
    },
  },
  {
    name: "event-drift",
    hash: event(() => seeded.shapes, () => seeded.driftEvent, "/diagnosis"),
    ready: async (page) => expect.poll(() => page.getByTestId("drift-change").count()).toBe(2),
  },
  { name: "keys", hash: () => "#/keys", ready: (page) => expect.poll(() => page.getByTestId("key-row").count()).toBeGreaterThan(0) },
  { name: "audit", hash: () => "#/audit", ready: (page) => expect.poll(() => page.getByTestId("audit-row").count()).toBeGreaterThan(0) },
  {
    name: "alerts",
    hash: () => "#/alerts",
    ready: async (page) => {
      await expect.poll(() => page.getByTestId("channel-row").count()).toBe(2);
      await expect.poll(() => page.locator('[data-testid="channel-row"][data-last-state="delivered"]').count()).toBe(1);
    },
  },
];

describe("the dashboard's views at 1366 and 390 px", () => {
  for (const width of WIDTHS) {
    it(`shows every main view at ${width} px without overflow or serious accessibility violations`, async () => {
      const { context, page } = await freshPage(width);
      try {
        await page.goto(`${gatewayUrl}/`);
        await page.getByTestId("api-key").waitFor();
        await check(page, "login", width);
        await logIn(page);
        for (const view of VIEWS) {
          await page.goto(`${gatewayUrl}/${view.hash()}`);
          await view.ready(page);
          await check(page, view.name, width);
          await view.after?.(page);
        }
      } finally {
        await context.close();
      }
    }, 180_000);
  }

  it("lets nothing overflow at 360 px either", async () => {
    const { context, page } = await freshPage(360);
    try {
      await page.goto(`${gatewayUrl}/`);
      await logIn(page);
      for (const view of VIEWS) {
        await page.goto(`${gatewayUrl}/${view.hash()}`);
        await view.ready(page);
        expect(await overflow(page), `${view.name} at 360 px`).toEqual([]);
        await view.after?.(page);
      }
    } finally {
      await context.close();
    }
  }, 120_000);

  it("has a favicon the gateway serves", async () => {
    const { context, page } = await freshPage(1366);
    await page.goto(`${gatewayUrl}/`);
    const href = (await page.locator('link[rel="icon"]').getAttribute("href"))!;
    const res = await fetch(new URL(href, gatewayUrl));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/svg+xml");
    await context.close();
  });
});

describe("links to a view", () => {
  it("opens a shared link in a fresh browser after the key: same endpoint, event, tab and filter; a reload keeps it", async () => {
    const link = `${gatewayUrl}/#/endpoints/${seeded.main.id}/events/${seeded.jsonEvent}/headers?q=opened`;
    const { context, page } = await freshPage(1366);
    try {
      await page.goto(link);
      await page.getByTestId("api-key").waitFor();
      expect(await page.evaluate("sessionStorage.length")).toBe(0);
      await logIn(page);
      const shows = async () => {
        await page.locator(`[data-testid="detail"][data-event-id="${seeded.jsonEvent}"]`).waitFor();
        await page.getByTestId("headers").waitFor();
        expect(await page.getByTestId("endpoint-view").getAttribute("data-endpoint-id")).toBe(seeded.main.id);
        expect(await page.getByTestId("event-tab-headers").getAttribute("aria-current")).toBe("page");
        expect(await page.getByTestId("search").inputValue()).toBe("opened");
        // The filter applies: only the "opened" events are listed.
        await expect.poll(() => page.getByTestId("event-row").count()).toBe(6);
      };
      await shows();
      expect(page.url()).toBe(link);
      await page.reload();
      await shows();
      expect(page.url()).not.toContain(KEY);
    } finally {
      await context.close();
    }
  });

  it("keeps a tab change and a new filter in the address, and the back button goes back", async () => {
    const { context, page } = await freshPage(1366);
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${seeded.main.id}`);
      await logIn(page);
      await page.getByTestId("search").fill("closed");
      await page.getByTestId("apply-filters").click();
      await expect.poll(() => page.url()).toContain("?q=closed");
      await expect.poll(() => page.getByTestId("event-row").count()).toBe(6);
      await page.getByTestId("tab-charts").click();
      await expect.poll(() => page.url()).toMatch(/\/charts$/);
      await page.goBack();
      await expect.poll(() => page.getByTestId("event-row").count()).toBe(6);
      expect(await page.getByTestId("search").inputValue()).toBe("closed");
    } finally {
      await context.close();
    }
  });

  it("shows one pane at a time on a phone, with a way back", async () => {
    const { context, page } = await freshPage(390);
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${seeded.main.id}/events/${seeded.jsonEvent}`);
      await logIn(page);
      await page.getByTestId("json-tree").waitFor();
      expect(await page.getByTestId("events").isVisible()).toBe(false);
      await page.getByTestId("back-events").click();
      await page.getByTestId("events").waitFor();
      expect(await page.getByTestId("detail").isVisible()).toBe(false);
      await page.getByTestId("back-endpoints").click();
      await page.getByTestId("endpoint-github-main").waitFor();
      expect(await page.getByTestId("events").isVisible()).toBe(false);
    } finally {
      await context.close();
    }
  });
});

describe("an event's actions", () => {
  it("folds and unfolds the JSON tree, and copies a node's path", async () => {
    const { context, page } = await freshPage(1366);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gatewayUrl });
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${seeded.main.id}/events/${seeded.jsonEvent}`);
      await logIn(page);
      const login = page.locator('[data-path=".pull_request.user.login"]');
      await login.waitFor();
      await page.getByTestId("collapse-all").click();
      expect(await login.isVisible()).toBe(false);
      await page.locator(".j-tree > li > .j-line > .j-toggle").click();
      await page.locator('[data-path=".pull_request"] > .j-line > .j-toggle').click();
      expect(await page.locator('[data-path=".pull_request.labels"]').isVisible()).toBe(true);
      expect(await login.isVisible()).toBe(false);
      await page.getByTestId("expand-all").click();
      await login.hover();
      await login.getByRole("button", { name: /Copy path/ }).click();
      await expect.poll(() => page.evaluate("navigator.clipboard.readText()")).toBe(".pull_request.user.login");
      await page.locator('[data-path=".pull_request.labels[1]"]').getByRole("button", { name: /Copy path/ }).click();
      await expect.poll(() => page.evaluate("navigator.clipboard.readText()")).toBe(".pull_request.labels[1]");
    } finally {
      await context.close();
    }
  });

  it("deletes an endpoint from its settings: gone from the list and from the API", async () => {
    const doomed = await api.endpoints.create({ slug: "doomed", displayName: "Doomed" });
    const { context, page } = await freshPage(1366);
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${doomed.id}/settings`);
      await logIn(page);
      page.once("dialog", (d) => void d.accept());
      await page.getByTestId("delete-endpoint").click();
      await page.getByTestId("endpoint-doomed").waitFor({ state: "detached" });
      await expect.poll(() => page.url()).toBe(`${gatewayUrl}/#/`);
      await expect(api.endpoints.get(doomed.id)).rejects.toMatchObject({ status: 404 });
    } finally {
      await context.close();
    }
  });

  it("deletes an event from its detail: gone from the list and from the API", async () => {
    const id = await capture(seeded.single.webhookUrl, { method: "POST", body: '{"delete":"me"}' });
    const { context, page } = await freshPage(1366);
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${seeded.single.id}/events/${id}`);
      await logIn(page);
      await page.locator(`[data-testid="detail"][data-event-id="${id}"]`).waitFor();
      page.once("dialog", (d) => void d.accept());
      await page.getByTestId("delete-event").click();
      await expect.poll(() => page.url()).toBe(`${gatewayUrl}/#/endpoints/${seeded.single.id}`);
      await expect.poll(() => page.locator(`[data-event-id="${id}"]`).count()).toBe(0);
      await expect(api.events.get(seeded.single.id, id)).rejects.toMatchObject({ status: 404 });
    } finally {
      await context.close();
    }
  });
});

describe("the keyboard", () => {
  it("moves with j and k, opens with Enter, and goes to the search with /", async () => {
    const { context, page } = await freshPage(1366);
    try {
      await page.goto(`${gatewayUrl}/#/endpoints/${seeded.main.id}`);
      await logIn(page);
      await expect.poll(() => page.getByTestId("event-row").count()).toBe(13);
      const ids = await page.getByTestId("event-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-event-id")!));
      const cursor = () => page.locator("tr.cursor").getAttribute("data-event-id");
      await page.keyboard.press("j");
      expect(await cursor()).toBe(ids[0]);
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      expect(await cursor()).toBe(ids[2]);
      await page.keyboard.press("k");
      expect(await cursor()).toBe(ids[1]);
      expect(await page.evaluate('document.activeElement.closest("tr").dataset.eventId')).toBe(ids[1]);
      await page.keyboard.press("Enter");
      await page.locator(`[data-testid="detail"][data-event-id="${ids[1]}"]`).waitFor();
      expect(page.url()).toContain(`/events/${ids[1]}`);
      await page.keyboard.press("j");
      expect(await cursor()).toBe(ids[2]);

      await page.keyboard.press("/");
      expect(await page.evaluate("document.activeElement.dataset.testid")).toBe("search");
      // Typed into the search, j and k are letters.
      await page.keyboard.type("jk");
      expect(await page.getByTestId("search").inputValue()).toBe("jk");
      expect(await cursor()).toBe(ids[2]);
    } finally {
      await context.close();
    }
  });
});
