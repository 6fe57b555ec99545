import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import Stripe from "stripe";
import { Code, createClient } from "@connectrpc/connect";
import { ReplayService, type Endpoint } from "@whc/contracts";
import { verifySignature } from "@whc/signatures";
import { appendCaptures, expectFailure } from "@whc/testing";
import { createReplayService } from "./service.js";
import { runCleanups, serve, startBackends, type Backends } from "./testing/index.js";

/*
 * SignEvent (design §19): fresh signature headers for stored bytes, with the endpoint's sealed
 * secret or a given one, over the real catalog and crypto services; checked with Stripe's own
 * library and the provider registry's verifiers.
 */

afterEach(runCleanups);

const STRIPE_SECRET = "whsec_sign_event_test";
const stripe = new Stripe("sk_test_x");
const NOW = 1_800_000_000_000;

async function startService() {
  const b = await startBackends();
  const service = createReplayService({ ...b.deps, now: () => NOW }, {
    dailyLimit: 0,
    connectTimeoutMs: 2000,
    totalTimeoutMs: 5000,
    maxExcerptBytes: 4096,
  });
  return { b, replay: createClient(ReplayService, serve((r) => r.service(ReplayService, service))) };
}

async function captured(b: Backends, endpoint: Endpoint, input: { body: string; headers?: [string, string][]; provider?: string; path?: string; originalSizeBytes?: number; withoutBody?: boolean }) {
  const [event] = await appendCaptures(b.catalog, b.sealer, [
    {
      accountId: endpoint.accountId,
      endpointId: endpoint.id,
      provider: input.provider ?? endpoint.provider,
      path: input.path ?? "",
      headers: input.headers ?? [["Content-Type", "application/json"]],
      body: input.withoutBody ? undefined : input.body,
      ...(input.originalSizeBytes !== undefined ? { originalSizeBytes: input.originalSizeBytes } : {}),
    },
  ]);
  return { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: event!.id, captureBaseUrl: `http://hooks.test/h/${endpoint.id}` };
}

describe("SignEvent", () => {
  it("signs the stored body now with the endpoint's secret: Stripe's library accepts it where the captured signature is stale", async () => {
    const { b, replay } = await startService();
    const endpoint = await b.createEndpoint({ provider: "stripe", operatingMode: "capture", sealedSecret: await b.sealSecret(STRIPE_SECRET) });
    const payload = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid" });
    // Signed by Stripe ten minutes ago (Stripe's library judges against the wall clock).
    const stale = stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 });
    const ref = await captured(b, endpoint, { body: payload, headers: [["Stripe-Signature", stale], ["Content-Type", "application/json"]] });

    const signed = await replay.signEvent(ref);
    expect(signed).toMatchObject({ provider: "stripe", signedAtMs: BigInt(NOW), replaces: ["stripe-signature"] });
    expect(signed.headers.map((h) => h.name)).toEqual(["Stripe-Signature"]);
    const fresh = signed.headers[0]!.value;
    expect(fresh).toMatch(new RegExp(`^t=${NOW / 1000},v1=[0-9a-f]{64}$`));
    // Signed at the wall clock's now, Stripe's library accepts it.
    const { replay: live } = await startServiceAtWallClock(b);
    const now = (await live.signEvent(ref)).headers[0]!.value;
    expect(stripe.webhooks.constructEvent(payload, now, STRIPE_SECRET).type).toBe("invoice.paid");
    expect(() => stripe.webhooks.constructEvent(payload, stale, STRIPE_SECRET)).toThrow(/tolerance/);
  });

  it("signs with target_secret instead, and signs target_url for a scheme that signs the URL (else the capture's own URL)", async () => {
    const { b, replay } = await startService();
    const endpoint = await b.createEndpoint({ provider: "twilio", operatingMode: "capture" });
    const body = "CallSid=CA1&From=%2B15550001";
    const ref = await captured(b, endpoint, { body, path: "/voice?x=1", headers: [["Content-Type", "application/x-www-form-urlencoded"], ["X-Twilio-Signature", "stale"]] });
    const check = (headers: { name: string; value: string }[], url: string, secret: string) =>
      verifySignature({ provider: "twilio", headers: headers.map((h) => [h.name, h.value]), body: Buffer.from(body), secret: Buffer.from(secret), url, nowMs: NOW }).verification;

    const own = await replay.signEvent({ ...ref, targetSecret: "twilio-token" });
    expect(check(own.headers, `${ref.captureBaseUrl}/voice?x=1`, "twilio-token")).toBe("verified");
    const local = await replay.signEvent({ ...ref, targetSecret: "twilio-token", targetUrl: "http://localhost:3000/voice?x=1" });
    expect(check(local.headers, "http://localhost:3000/voice?x=1", "twilio-token")).toBe("verified");
    expect(check(local.headers, "http://localhost:3000/voice?x=1", "another")).toBe("failed");
  });

  it("refuses without any secret, with replay from the API disabled, a key-pair scheme without its private key, a body not stored, another account", async () => {
    const { b, replay } = await startService();
    const bare = await b.createEndpoint({ provider: "stripe", operatingMode: "capture" });
    const ref = await captured(b, bare, { body: "{}" });
    await expectFailure(replay.signEvent(ref), Code.InvalidArgument, "validation_failed", { field: "target_secret", fieldReason: "required" });

    const closed = await b.createEndpoint({ provider: "stripe", operatingMode: "capture", replayFromApi: false, sealedSecret: await b.sealSecret(STRIPE_SECRET) });
    const closedRef = await captured(b, closed, { body: "{}" });
    await expectFailure(replay.signEvent(closedRef), Code.PermissionDenied, "replay_disabled");
    expect((await replay.signEvent({ ...closedRef, client: "dashboard" })).headers).toHaveLength(1);

    const publicKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey.export({ format: "der", type: "spki" }).toString("base64");
    const sendgrid = await b.createEndpoint({ provider: "sendgrid", operatingMode: "capture", sealedSecret: await b.sealSecret(publicKey) });
    await expectFailure(replay.signEvent(await captured(b, sendgrid, { body: "[]" })), Code.FailedPrecondition, "signing_unsupported");

    const metadataOnly = await b.createEndpoint({ provider: "stripe", operatingMode: "metadata_only", sealedSecret: await b.sealSecret(STRIPE_SECRET) });
    const noBody = await captured(b, metadataOnly, { body: "{}", withoutBody: true, originalSizeBytes: 2 });
    await expectFailure(replay.signEvent(noBody), Code.Aborted, "conflict");

    const { key } = await b.catalog.ensureApiKey({ accountName: "someone-else", keyHash: new Uint8Array(32).fill(7), prefix: "whc_x" });
    await expectFailure(replay.signEvent({ ...closedRef, accountId: key!.accountId, targetSecret: "x" }), Code.NotFound, "not_found");
  });
});

async function startServiceAtWallClock(b: Backends) {
  const service = createReplayService(b.deps, { dailyLimit: 0, connectTimeoutMs: 2000, totalTimeoutMs: 5000, maxExcerptBytes: 4096 });
  return { replay: createClient(ReplayService, serve((r) => r.service(ReplayService, service))) };
}
