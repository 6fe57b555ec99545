import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { replayResult, type ApiError, type ReplayRequest } from "@whc/api-model";
import { errorTable } from "./errors-table.js";
import { recordingFetch, refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

const DAILY_LIMIT = 3;

interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

/** A real HTTP server on loopback that keeps what it receives and answers 202. */
async function startTarget() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      res.writeHead(202, { "content-type": "text/plain" }).end("thanks");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let t: TestGateway;
let target: Awaited<ReturnType<typeof startTarget>>;
beforeAll(async () => {
  [t, target] = await Promise.all([startTestGateway({ replayDailyLimit: DAILY_LIMIT, egressSlotsPerOrigin: 1 }), startTarget()]);
});
afterAll(async () => {
  await Promise.all([t.close(), target.close()]);
});

/** Seconds to the next UTC midnight, as RateLimit-Reset and Retry-After count them. */
function secondsToMidnight(): number {
  const now = new Date();
  return Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000);
}

function expectReply(err: ApiError, status: number, code: keyof typeof errorTable) {
  expect([err.status, err.code, err.message]).toEqual([status, code, errorTable[code].message]);
  expect(err.headers?.get("x-request-id")).toBe(err.requestId);
}

/** An account of its own (its own daily allowance) with one endpoint and one stored capture. */
async function source(flags: { replayFromApi?: boolean; replayFromDashboard?: boolean } = {}, body: Buffer = Buffer.from("{}")) {
  const owner: TestAccount = await t.account();
  const ep = await owner.api.endpoints.create(flags);
  const [event] = await t.append(owner, ep.id, [
    {
      method: "PUT",
      path: "/orders/7?x=1",
      headers: [
        ["Content-Type", "application/octet-stream"],
        ["X-Custom", "kept"],
        ["X-Forwarded-For", "203.0.113.9"],
      ],
      body,
    },
  ]);
  const rec = recordingFetch();
  // The dashboard is a key with scope `dashboard` (its session, design §14), not a header.
  const dashboardKey = (await owner.api.keys.create({ name: "dashboard session", scopes: ["dashboard"] })).key;
  const replay = (req: ReplayRequest, as: "api" | "dashboard" = "api") =>
    t.client(as === "dashboard" ? dashboardKey : owner.key, { fetch: rec.fetch }).events.replay(ep.id, event!.id, req);
  /** The replay a client sends with `X-Whc-Client: dashboard`, as the dashboard once did. */
  const claimingDashboard = (key: string, url: string) =>
    fetch(`${t.url}/v1/endpoints/${ep.id}/events/${event!.id}/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-whc-client": "dashboard" },
      body: JSON.stringify({ target_url: url }),
    });
  return { owner, endpointId: ep.id, eventId: event!.id, replay, claimingDashboard, last: () => rec.last() };
}

describe("replay", () => {
  it("sends the stored bytes to the target and answers with the outcome and RateLimit headers", async () => {
    const bytes = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x22, 0xc3, 0x28, 0x7d]);
    const s = await source({}, bytes);
    const before = target.received.length;
    const result = await s.replay({ target_url: `${target.url}/recv?via=replay` });

    expect(replayResult.strict().parse(result)).toEqual(result);
    expect(result).toMatchObject({
      result: "delivered",
      target_status: 202,
      mode: "exact",
      event_id: s.eventId,
      target_url: `${target.url}/recv?via=replay`,
      excerpt_truncated: false,
      source_body_truncated: false,
    });
    expect(Buffer.from(result.response_excerpt_base64, "base64").toString()).toBe("thanks");
    expect(result.audit_id).toMatch(/^[0-9a-f-]{36}$/);

    expect(target.received.length).toBe(before + 1);
    const got = target.received[before]!;
    expect(got.method).toBe("PUT");
    expect(got.url).toBe("/recv?via=replay");
    expect(got.body.equals(bytes)).toBe(true);
    const names = got.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(got.rawHeaders).toEqual(expect.arrayContaining(["X-Custom", "kept"]));
    expect(names).not.toContain("x-forwarded-for");

    const res = s.last();
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-limit")).toBe(String(DAILY_LIMIT));
    expect(res.headers.get("ratelimit-remaining")).toBe(String(DAILY_LIMIT - 1));
    const reset = Number(res.headers.get("ratelimit-reset"));
    expect(Math.abs(reset - secondsToMidnight())).toBeLessThanOrEqual(2);
  });

  it("refuses with 403 replay_disabled when replayFromApi is false, whatever the request's headers; the dashboard's session may", async () => {
    const s = await source({ replayFromApi: false, replayFromDashboard: true });
    const before = target.received.length;
    const err = await refusal(s.replay({ target_url: `${target.url}/api` }));
    expectReply(err, 403, "replay_disabled");
    expect(err.headers?.get("ratelimit-remaining")).toBeNull();
    // Claiming to be the dashboard changes nothing, with the account's `*` key or a replay-only one (design §14).
    const replayer = (await s.owner.api.keys.create({ name: "ci replayer", scopes: ["events:replay"] })).key;
    for (const key of [s.owner.key, replayer]) {
      const claimed = await s.claimingDashboard(key, `${target.url}/claimed`);
      expect(claimed.status).toBe(403);
      expect(((await claimed.json()) as { error: string }).error).toBe("replay_disabled");
    }
    expect(target.received.length).toBe(before);

    const viaDashboard = await s.replay({ target_url: `${target.url}/dash` }, "dashboard");
    expect(viaDashboard.result).toBe("delivered");
    // The refusals used none of the allowance.
    expect(s.last().headers.get("ratelimit-remaining")).toBe(String(DAILY_LIMIT - 1));
    expect(target.received.slice(before).map((r) => r.url)).toEqual(["/dash"]);
  });

  it("lets replayFromDashboard alone govern the dashboard session's replays, and replayFromApi every other key's", async () => {
    const s = await source({ replayFromApi: true, replayFromDashboard: false });
    const before = target.received.length;
    expectReply(await refusal(s.replay({ target_url: `${target.url}/dash` }, "dashboard")), 403, "replay_disabled");
    // Any other key is the API, whatever it claims.
    expect((await s.claimingDashboard(s.owner.key, `${target.url}/api`)).status).toBe(200);
    expect((await s.replay({ target_url: `${target.url}/api` })).result).toBe("delivered");
    expect(target.received.slice(before).map((r) => r.url)).toEqual(["/api", "/api"]);
  });

  it("refuses past the daily limit with 429 replay_limit_exceeded, Retry-After and RateLimit headers", async () => {
    const s = await source();
    const before = target.received.length;
    for (let i = 1; i <= DAILY_LIMIT; i++) {
      expect((await s.replay({ target_url: `${target.url}/n${i}` })).result).toBe("delivered");
      expect(s.last().headers.get("ratelimit-remaining")).toBe(String(DAILY_LIMIT - i));
    }
    const err = await refusal(s.replay({ target_url: `${target.url}/over` }));
    expectReply(err, 429, "replay_limit_exceeded");
    expect(err.details).toEqual({});
    const h = err.headers!;
    expect(h.get("ratelimit-limit")).toBe(String(DAILY_LIMIT));
    expect(h.get("ratelimit-remaining")).toBe("0");
    expect(h.get("retry-after")).toBe(h.get("ratelimit-reset"));
    expect(Math.abs(Number(h.get("retry-after")) - secondsToMidnight())).toBeLessThanOrEqual(2);
    expect(target.received.slice(before).map((r) => r.url)).toEqual(["/n1", "/n2", "/n3"]);

    // The allowance is the account's: another account still replays.
    expect((await (await source()).replay({ target_url: `${target.url}/other` })).result).toBe("delivered");
  });

  it("answers 503 egress_capacity_exhausted with Retry-After: 1 and no RateLimit headers while the origin's slots are taken", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    const slow = http.createServer((req, res) => {
      arrived += 1;
      req.resume();
      void released.then(() => res.end("late"));
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    try {
      const s = await source();
      const first = s.replay({ target_url: `${slowUrl}/held` });
      while (arrived === 0) await new Promise((r) => setTimeout(r, 5));

      const err = await refusal(s.replay({ target_url: `${slowUrl}/second` }));
      expectReply(err, 503, "egress_capacity_exhausted");
      expect(err.headers?.get("retry-after")).toBe("1");
      for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) expect(err.headers?.get(name)).toBeNull();
      // Another origin is not held up.
      expect((await s.replay({ target_url: `${target.url}/free` })).result).toBe("delivered");

      release();
      expect((await first).result).toBe("delivered");
      expect(arrived).toBe(1);
      // Two replays charged; the refused one did not.
      expect((await s.replay({ target_url: `${slowUrl}/third` })).result).toBe("delivered");
      expect(s.last().headers.get("ratelimit-remaining")).toBe(String(DAILY_LIMIT - 3));
    } finally {
      release();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  it("refuses a target that is not http(s) and a request without target_url", async () => {
    const s = await source();
    expectReply(await refusal(s.replay({ target_url: "ftp://127.0.0.1/x" })), 400, "target_not_allowed");
    const missing = await refusal(s.replay({} as ReplayRequest));
    expectReply(missing, 400, "validation_failed");
    expect(missing.details).toEqual({ field: "target_url", reason: "required" });
    const unknown = await refusal(s.replay({ target_url: `${target.url}/x`, retries: 3 } as ReplayRequest));
    expect(unknown.details).toEqual({ field: "retries", reason: "unknown" });
  });
});
