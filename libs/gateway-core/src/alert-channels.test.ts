import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { ALERT_CHANNEL_LIMITS, ALERT_SECRET_PATTERN, alertChannelView, createdAlertChannel, type CreateAlertChannelRequest } from "@whc/api-model";
import { refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/**
 * Alert channels over /v1 (design §18; ADR 0086): created with a secret shown once, listed
 * without it, validated with the codes of design §3, limited per account, reached by keys as
 * design §15 says, deleted and tested. Sending is the replay process's (composition tests).
 */
let t: TestGateway;
let strict: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
  strict = await startTestGateway({ allowPrivateTargets: false });
});
afterAll(async () => {
  await t.close();
  await strict.close();
});

const UNKNOWN_ID = "01a20000-0000-7000-8000-000000000000";
const SLACK = "https://hooks.slack.example.test/services/T0/B0/x";

const channel = (extra: Partial<CreateAlertChannelRequest> = {}): CreateAlertChannelRequest => ({
  name: `ops-${Math.random().toString(36).slice(2)}`,
  type: "webhook",
  url: "http://127.0.0.1:9/alerts",
  events: ["delivery.exhausted"],
  ...extra,
});

async function post(account: TestAccount, body: unknown, on = t) {
  const res = await fetch(`${on.url}/v1/alert-channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe("alert channels over /v1", () => {
  it("creates a webhook channel with a generated secret shown once, lists it without the secret, and keeps a given one", async () => {
    const created = await t.a.api.alerts.create(channel({ name: "pager", events: ["delivery.exhausted", "signature.failed", "delivery.exhausted"] }));
    expect(createdAlertChannel.strict().parse(created)).toEqual(created);
    expect(created).toMatchObject({ name: "pager", type: "webhook", events: ["delivery.exhausted", "signature.failed"], endpointIds: [], secretSet: true, lastDelivery: null });
    expect(created.secret).toMatch(ALERT_SECRET_PATTERN);
    expect(Buffer.from(created.secret!.slice("whsec_".length), "base64")).toHaveLength(32);

    const listed = (await t.a.api.alerts.list()).items.find((c) => c.id === created.id)!;
    expect(alertChannelView.strict().parse(listed)).toEqual(listed);
    const { secret: _secret, ...shown } = created;
    expect(listed).toEqual(shown);
    expect(JSON.stringify(await t.a.api.alerts.list())).not.toContain(created.secret);

    const given = "whsec_" + Buffer.alloc(24, 7).toString("base64");
    expect((await t.a.api.alerts.create(channel({ secret: given }))).secret).toBe(given);
    const slack = await t.a.api.alerts.create(channel({ type: "slack", url: SLACK }));
    expect(slack).toMatchObject({ type: "slack", secretSet: false });
    expect(slack).not.toHaveProperty("secret");
  });

  it("refuses bad input with validation_failed naming the field, a taken name with 409, and a secret on a slack channel", async () => {
    const cases: [unknown, string, string][] = [
      [{ ...channel(), name: "" }, "name", "length"],
      [{ ...channel(), name: "n".repeat(ALERT_CHANNEL_LIMITS.nameLength + 1) }, "name", "length"],
      [{ ...channel(), type: "email" }, "type", "format"],
      [{ ...channel(), url: `https://a.example.test/${"x".repeat(ALERT_CHANNEL_LIMITS.urlLength)}` }, "url", "length"],
      [{ ...channel(), events: [] }, "events", "length"],
      [{ ...channel(), events: ["delivery.lost"] }, "events.0", "format"],
      [{ ...channel(), endpointIds: ["nope"] }, "endpointIds.0", "format"],
      [{ ...channel(), endpointIds: [UNKNOWN_ID] }, "endpointIds.0", "unknown"],
      [{ ...channel(), secret: "not-a-secret" }, "secret", "pattern"],
      [{ ...channel(), type: "slack", url: SLACK, secret: "whsec_" + Buffer.alloc(24).toString("base64") }, "secret", "unknown"],
      [{ ...channel(), colour: "red" }, "colour", "unknown"],
      [{ name: "x", type: "webhook", url: "http://127.0.0.1:9/" }, "events", "required"],
      [{ ...channel(), url: "not a url" }, "url", "format"],
    ];
    for (const [body, field, reason] of cases) {
      const res = await post(t.a, body);
      expect([res.status, res.body.error, res.body.details], JSON.stringify(body)).toEqual([400, "validation_failed", { field, reason }]);
    }
    const foreign = await t.b.api.endpoints.create({ slug: "alerts-foreign" });
    const res = await post(t.a, { ...channel(), endpointIds: [foreign.id] });
    expect([res.status, res.body.details]).toEqual([400, { field: "endpointIds.0", reason: "unknown" }]);

    await t.a.api.alerts.create(channel({ name: "taken" }));
    const taken = await post(t.a, channel({ name: "taken" }));
    expect([taken.status, taken.body.error, taken.body.details]).toEqual([409, "conflict", { field: "name" }]);
    expect((await post(t.b, channel({ name: "taken" }))).status).toBe(201);
    expect((await t.a.api.alerts.list()).items.filter((c) => c.name === "taken")).toHaveLength(1);
  });

  it("vets the URL as a forward destination: the guard's refusals, the deployment's own webhook URLs, and a name that does not resolve", async () => {
    const loopback = await post(strict.a, channel({ url: "http://127.0.0.1:9/" }), strict);
    expect([loopback.status, loopback.body.error, loopback.body.details]).toEqual([400, "target_not_allowed", { reason: "loopback" }]);
    const metadata = await post(t.a, channel({ url: "http://169.254.169.254/latest" }), t);
    expect([metadata.status, metadata.body.details]).toEqual([400, { reason: "metadata" }]);
    const scheme = await post(t.a, channel({ url: "ftp://files.example.test/" }));
    expect([scheme.status, scheme.body.error, scheme.body.details]).toEqual([400, "target_not_allowed", { reason: "scheme" }]);
    const ep = await t.a.api.endpoints.create({ slug: "alerts-loop" });
    const loop = await post(t.a, channel({ url: ep.webhookUrl }));
    expect([loop.status, loop.body.details]).toEqual([400, { field: "url", reason: "loop" }]);
    const unresolved = await post(t.a, channel({ url: "https://does-not-resolve.invalid/alerts" }));
    expect([unresolved.status, unresolved.body.warnings]).toEqual([201, [expect.objectContaining({ code: "dns_failure" })]]);
    expect((await strict.a.api.alerts.list()).items).toEqual([]);
  });

  it("refuses a channel past the account's limit with 429 quota_exceeded, and another account is not limited by it", async () => {
    const c = await t.account("alerts-limit");
    for (let i = 0; i < ALERT_CHANNEL_LIMITS.perAccount; i += 1) await c.api.alerts.create(channel({ type: "slack", url: SLACK }));
    const refused = await post(c, channel({ type: "slack", url: SLACK }));
    expect([refused.status, refused.body.error, refused.body.details]).toEqual([429, "quota_exceeded", { quota: "alert_channels", limit: ALERT_CHANNEL_LIMITS.perAccount }]);
    expect((await post(t.b, channel({ type: "slack", url: SLACK }))).status).toBe(201);
  });

  it("deletes a channel once, tests one with 202 and its alert id, and answers another account's ids as unknown ones", async () => {
    const created = await t.a.api.alerts.create(channel());
    const test = await t.a.api.alerts.test(created.id);
    expect(test).toEqual({ alertId: expect.stringMatching(/^[0-9a-f-]{36}$/), state: "pending" });
    const again = await t.a.api.alerts.test(created.id);
    expect(again.alertId).not.toBe(test.alertId);

    for (const op of [() => t.b.api.alerts.test(created.id), () => t.b.api.alerts.delete(created.id), () => t.a.api.alerts.test(UNKNOWN_ID)]) {
      expect(await refusal(op())).toMatchObject({ status: 404, code: "not_found" });
    }
    expect((await t.b.api.alerts.list()).items.map((c) => c.id)).not.toContain(created.id);
    await t.a.api.alerts.delete(created.id);
    expect(await refusal(t.a.api.alerts.delete(created.id))).toMatchObject({ status: 404, code: "not_found" });
    expect((await t.a.api.alerts.list()).items.map((c) => c.id)).not.toContain(created.id);
    const audit = (await t.a.api.audit.list({ action: "alert_channel.deleted" })).items.find((e) => e.details.id === created.id);
    expect(audit?.details).toEqual({ id: created.id, name: created.name });
  });

  it("lets a key restricted to endpoints create, see, test and delete only channels restricted to some of its endpoints", async () => {
    const mine = await t.a.api.endpoints.create({ slug: "alerts-restricted-mine" });
    const other = await t.a.api.endpoints.create({ slug: "alerts-restricted-other" });
    const everyEndpoint = await t.a.api.alerts.create(channel());
    const otherOnly = await t.a.api.alerts.create(channel({ endpointIds: [other.id] }));
    const restricted = await t.a.api.keys.create({ name: "team", scopes: ["alerts:write"], endpointIds: [mine.id] });
    const team = { ...t.a, key: restricted.key, api: t.client(restricted.key) };

    for (const endpointIds of [undefined, [], [other.id], [mine.id, other.id]]) {
      const res = await post(team, channel(endpointIds ? { endpointIds } : {}));
      expect([res.status, res.body.error, res.body.details], JSON.stringify(endpointIds)).toEqual([403, "forbidden", { field: "endpointIds" }]);
    }
    const own = await team.api.alerts.create(channel({ endpointIds: [mine.id] }));
    expect((await team.api.alerts.list()).items.map((c) => c.id)).toEqual([own.id]);
    for (const id of [everyEndpoint.id, otherOnly.id]) {
      const beyond = await refusal(team.api.alerts.test(id));
      const unknown = await refusal(team.api.alerts.test(UNKNOWN_ID));
      expect([beyond.status, beyond.code, beyond.message]).toEqual([unknown.status, unknown.code, unknown.message]);
      expect((await refusal(team.api.alerts.delete(id))).status).toBe(404);
    }
    expect((await team.api.alerts.test(own.id)).state).toBe("pending");
    await team.api.alerts.delete(own.id);
    expect((await t.a.api.alerts.list()).items.map((c) => c.id)).toEqual(expect.arrayContaining([everyEndpoint.id, otherOnly.id]));
  });

  it("needs alerts:write to list as well as to change (a Slack URL is a credential)", async () => {
    const reader = await t.a.api.keys.create({ name: "reader", scopes: ["endpoints:read", "events:read", "audit:read"] });
    expect(await refusal(t.client(reader.key).alerts.list())).toMatchObject({ status: 403, code: "forbidden", details: { scope: "alerts:write" } });
  });
});
