import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import Stripe from "stripe";
import { buildApps, freePort, startNode, tempDir, waitFor, type RunningProcess } from "@whc/testing";

const run = promisify(execFile);
const SECRET = "whsec_local_app_secret";
let server: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let whc: string;
let env: Record<string, string>;
/** A local app that verifies with the stripe package's constructEvent, as integrators do. */
let app: http.Server;
let appUrl: string;
const verifiedByApp: { type: string; amount: unknown }[] = [];

async function cli(...args: string[]) {
  const { stdout } = await run(process.execPath, [whc, ...args], { env: { ...env, PATH: process.env.PATH ?? "" } });
  return stdout;
}

async function cliFailure(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await cli(...args);
  } catch (err) {
    return err as { code: number; stderr: string };
  }
  throw new Error(`whc ${args.join(" ")} succeeded`);
}

beforeAll(async () => {
  const mains = buildApps("all-in-one", "whc");
  whc = mains.whc!;
  dir = tempDir("whc-cli-trigger-");
  const [gw, ing] = [await freePort(), await freePort()];
  server = startNode(mains["all-in-one"]!, {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ing}`,
    WHC_LOG_LEVEL: "warn",
  });
  await server.waitForOutput(/whc_[A-Za-z0-9]{32,}/);
  env = { WHC_DATA_DIR: dir.path, WHC_API_URL: `http://127.0.0.1:${gw}` };
  await waitFor(async () => (await fetch(`${env.WHC_API_URL}/healthz`)).ok || undefined, { what: "server" });
  env.WHC_API_KEY = (JSON.parse(await cli("--json", "keys", "create", "--account", "triggers")) as { key: string }).key;

  const stripe = new Stripe("sk_test_x");
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        const event = stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET);
        verifiedByApp.push({ type: event.type, amount: (event.data.object as { amount_paid?: unknown }).amount_paid });
        res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}');
      } catch (err) {
        res.writeHead(400, { "content-type": "text/plain" }).end(`Webhook Error: ${(err as Error).message}`);
      }
    });
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/webhooks/stripe`;
});

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => app?.close(resolve));
  dir?.remove();
});

describe("whc trigger", () => {
  it("--to signs locally what the app's stripe.webhooks.constructEvent accepts, with the --set value, and prints the status", async () => {
    const out = await cli("trigger", "--to", appUrl, "--provider", "stripe", "--secret", SECRET, "invoice.paid", "--set", "data.object.amount_paid=500");
    expect(out).toMatch(/^200 /);
    expect(out).toContain('{"received":true}');
    expect(verifiedByApp).toEqual([{ type: "invoice.paid", amount: 500 }]);
    // Signed with another secret, the app refuses it, and whc says so with a non-zero exit.
    const refused = await cliFailure("trigger", "--to", appUrl, "--provider", "stripe", "--secret", "whsec_wrong", "invoice.paid");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("answered 400");
  });

  it("through an endpoint: captured, verified, the --set value stored", async () => {
    const ep = JSON.parse(await cli("--json", "endpoints", "create", "--slug", "billing", "--provider", "stripe", "--secret", SECRET)) as { id: string };
    const { eventId } = JSON.parse(await cli("--json", "trigger", "billing", "invoice.paid", "--set", "data.object.amount_paid=700")) as { eventId: string };
    const res = await fetch(`${env.WHC_API_URL}/v1/endpoints/${ep.id}/events/${eventId}`, { headers: { authorization: `Bearer ${env.WHC_API_KEY}` } });
    const event = (await res.json()) as { verification: string; canonicalEventType: string; body: string };
    expect([event.verification, event.canonicalEventType]).toEqual(["verified", "invoice.paid"]);
    expect(JSON.parse(event.body).data.object.amount_paid).toBe(700);
    const unknown = await cliFailure("trigger", "billing", "invoice.teleported");
    expect(unknown.stderr).toContain("eventType (unknown)");
  });

  it("--list prints the sample event types", async () => {
    expect(await cli("trigger", "--list", "--provider", "stripe")).toContain("invoice.paid");
    const all = JSON.parse(await cli("--json", "trigger", "--list")) as { provider: string; eventTypes: string[] }[];
    expect(all.find((p) => p.provider === "twilio")!.eventTypes.length).toBeGreaterThanOrEqual(3);
    expect(all.some((p) => p.provider === "generic")).toBe(false);
  });
});
