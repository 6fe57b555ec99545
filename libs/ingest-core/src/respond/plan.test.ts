import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endpointResponseConfig, type EndpointResponseConfig, type ResponseRule } from "@whc/api-model";
import { reply } from "../answer.js";
import type { RenderedAnswer } from "./answer-types.js";
import { pathMatches, subPathOf } from "./path-glob.js";
import { builtInAnswer, handshakesEnabled, planAnswer, resolveAnswer, sequenceEntry, type PlanRequest } from "./plan.js";
import type { TemplateContext } from "./templates.js";

const req = (partial: Partial<PlanRequest> = {}): PlanRequest => ({
  method: partial.method ?? "POST",
  path: partial.path ?? "/orders/7?x=1",
  headers: partial.headers ?? [["X-Tenant", "a"]],
  eventType: partial.eventType ?? "invoice.paid",
});

const ctx = (partial: Partial<TemplateContext> = {}): TemplateContext => ({
  eventId: "0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111",
  receivedAtMs: 0,
  path: "/orders/7?tenant=a",
  headers: [],
  body: new Uint8Array(0),
  ...partial,
});

/** Configurations go through the real schema, so a test cannot rely on a shape the API refuses. */
const config = (value: unknown): EndpointResponseConfig => endpointResponseConfig.parse(value);
const rule = (match: ResponseRule["match"], status: number): ResponseRule => ({ match, status });
const text = (a: RenderedAnswer) => Buffer.from(a.body).toString("utf8");

describe("planAnswer", () => {
  it("without a configuration, or with nothing that applies, is the default", () => {
    expect(planAnswer(undefined, req())).toEqual({ source: "default" });
    expect(planAnswer(config({ handshakes: true, status: 202 }), req())).toEqual({ source: "default" });
    expect(planAnswer(config({ rules: [rule({ method: "GET" }, 500)] }), req())).toEqual({ source: "default" });
  });

  it("takes the first rule whose every match field holds, without its match", () => {
    const plan = planAnswer(
      config({
        rules: [
          { match: { method: "post", path: "/orders/*", eventType: "invoice.paid", header: { name: "x-tenant", equals: "b" } }, status: 500 },
          { match: { method: "post", path: "/orders/*", eventType: "invoice.paid", header: { name: "x-tenant", equals: "a" } }, status: 501, body: "r" },
          { match: {}, status: 502 },
        ],
      }),
      req(),
    );
    expect(plan).toEqual({ source: "rule", answer: { status: 501, body: "r" } });
  });

  it("needs each match field: method (any case), path without the query, event type, header (name any case, value exact)", () => {
    const holds = (match: ResponseRule["match"], r = req()) => planAnswer(config({ rules: [rule(match, 500)] }), r).source === "rule";
    expect(holds({ method: "pOsT" })).toBe(true);
    expect(holds({ method: "PUT" })).toBe(false);
    expect(holds({ path: "/orders/7" })).toBe(true);
    expect(holds({ path: "/orders/8" })).toBe(false);
    expect(holds({ eventType: "invoice.paid" })).toBe(true);
    expect(holds({ eventType: "Invoice.Paid" })).toBe(false);
    expect(holds({ header: { name: "X-TENANT", equals: "a" } })).toBe(true);
    expect(holds({ header: { name: "X-Tenant", equals: "A" } })).toBe(false);
    expect(holds({ header: { name: "X-Other", equals: "" } })).toBe(false);
    expect(holds({ header: { name: "x-tenant", equals: "b" } }, req({ headers: [["X-Tenant", "a"], ["x-tenant", "b"]] }))).toBe(true);
  });

  it("falls to the sequence when no rule matches, and rules still win over it", () => {
    const sequence = [{ status: 500 }, { status: 500 }, { status: 200 }];
    expect(planAnswer(config({ sequence }), req())).toEqual({ source: "sequence", sequence });
    expect(planAnswer(config({ sequence, rules: [rule({ method: "POST" }, 418)] }), req()).source).toBe("rule");
  });

  it("answers with the first matching rule and never a later one (property)", () => {
    const methods = ["GET", "POST", "put"];
    const ruleArb = fc.record({ method: fc.option(fc.constantFrom(...methods), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), fc.constantFrom("GET", "POST", "PUT"), (matches, method) => {
        const rules = matches.map((m, i) => ({ match: m.method === undefined ? {} : { method: m.method }, status: 200 + i }));
        const plan = planAnswer(config({ rules }), req({ method }));
        const first = matches.findIndex((m) => m.method === undefined || m.method.toUpperCase() === method);
        expect(plan.source).toBe(first < 0 ? "default" : "rule");
        if (first >= 0) expect(plan.answer?.status).toBe(200 + first);
      }),
    );
  });
});

describe("sequenceEntry", () => {
  it("takes entry n mod length", () => {
    const sequence = [{ status: 500 }, { status: 501 }, { status: 200 }];
    expect([0, 1, 2, 3, 4, 7].map((n) => sequenceEntry(sequence, n)?.status)).toEqual([500, 501, 200, 500, 501, 501]);
    expect(sequenceEntry(sequence, 10n ** 20n)?.status).toBe(501);
    expect(sequenceEntry([], 3)).toBeUndefined();
  });
});

describe("handshakesEnabled", () => {
  it("is on unless the endpoint says handshakes: false", () => {
    expect([undefined, config({}), config({ handshakes: true }), config({ handshakes: false })].map(handshakesEnabled)).toEqual([true, true, true, false]);
  });
});

describe("path patterns", () => {
  it("match the sub-path without its query; the webhookUrl itself is /", () => {
    expect(subPathOf("")).toBe("/");
    expect(subPathOf("?a=/b")).toBe("/");
    expect(subPathOf("/a/b?c=d/e")).toBe("/a/b");
    expect(pathMatches("/", "")).toBe(true);
    expect(pathMatches("/", "?x=1")).toBe(true);
    expect(pathMatches("/orders/*", "/orders/7?x=/y/z")).toBe(true);
  });

  it("read * as one non-empty segment and ** as any rest, none included", () => {
    expect(pathMatches("/orders/*", "/orders/7")).toBe(true);
    expect(pathMatches("/orders/*", "/orders/7/items")).toBe(false);
    expect(pathMatches("/orders/*", "/orders/")).toBe(false);
    expect(pathMatches("/orders/*", "/orders")).toBe(false);
    expect(pathMatches("/orders/**", "/orders")).toBe(true);
    expect(pathMatches("/orders/**", "/orders/7/items/3")).toBe(true);
    expect(pathMatches("/orders/**", "/order")).toBe(false);
    expect(pathMatches("/**", "")).toBe(true);
    expect(pathMatches("/*/items/**", "/7/items")).toBe(true);
    expect(pathMatches("/ord_*", "/ord_1")).toBe(false);
    expect(pathMatches("/ord_*", "/ord_*")).toBe(true);
  });

  const segment = fc.stringMatching(/^[a-z0-9%._-]{1,6}$/);
  const segments = fc.array(segment, { maxLength: 6 });
  const join = (parts: readonly string[]) => `/${parts.join("/")}`;

  it("match a literal path exactly (property)", () => {
    fc.assert(
      fc.property(segments, segments, (a, b) => {
        expect(pathMatches(join(a), join(b))).toBe(join(a) === join(b));
      }),
    );
  });

  it("still match with any segments turned into * (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(segment, fc.boolean()), { minLength: 1, maxLength: 6 }), (parts) => {
        const path = join(parts.map(([s]) => s));
        expect(pathMatches(join(parts.map(([s, star]) => (star ? "*" : s))), path)).toBe(true);
      }),
    );
  });

  it("match every path under a prefix/** and none elsewhere (property)", () => {
    fc.assert(
      fc.property(segments, segments, segments, (prefix, rest, other) => {
        const pattern = `${join(prefix)}/**`.replace(/^\/\//, "/");
        expect(pathMatches(pattern, join([...prefix, ...rest]))).toBe(true);
        const isUnder = other.length >= prefix.length && prefix.every((s, i) => other[i] === s);
        expect(pathMatches(pattern, join(other))).toBe(isUnder || (prefix.length === 0 && other.length === 0));
      }),
    );
  });

  it("agree with a naive backtracking matcher on patterns mixing *, ** and literals (property)", () => {
    const naive = (want: readonly string[], have: readonly string[]): boolean => {
      if (want.length === 0) return have.length === 0;
      const [head, ...tail] = want;
      if (head === "**") return have.some((_, i) => naive(tail, have.slice(i))) || naive(tail, []);
      if (have.length === 0) return false;
      return (head === "*" ? have[0] !== "" : head === have[0]) && naive(tail, have.slice(1));
    };
    const parts = fc.array(fc.constantFrom("a", "b", "", "*", "**"), { maxLength: 6 });
    fc.assert(
      fc.property(parts, fc.array(fc.constantFrom("a", "b", ""), { maxLength: 6 }), (want, have) => {
        const segmentsOf = (parts: readonly string[]) => join(parts).split("/").slice(1);
        expect(pathMatches(join(want), join(have))).toBe(naive(segmentsOf(want), segmentsOf(have)));
      }),
      { numRuns: 2000 },
    );
  });

  it("stay fast on patterns full of ** (no exponential backtracking)", () => {
    const started = performance.now();
    expect(pathMatches(`/${"**/".repeat(100)}x`, `/${"a/".repeat(200)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

/** What `reply()` in answer.ts writes today, captured from a stand-in response. */
function todaysReply(id: string): { status: number; headers: Record<string, unknown>; body: Buffer } {
  const written: { status: number; headers: Record<string, unknown>; body: Buffer } = { status: 0, headers: {}, body: Buffer.alloc(0) };
  const res = {
    writeHead(status: number, headers: Record<string, unknown>) {
      written.status = status;
      written.headers = headers;
    },
    end(text: string) {
      written.body = Buffer.from(text);
    },
  } as unknown as ServerResponse;
  reply(res, 200, { ok: true, id });
  return written;
}

describe("resolveAnswer", () => {
  const id = "0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111";

  it("without a configuration is byte for byte today's answer", () => {
    const today = todaysReply(id);
    for (const cfg of [undefined, config({}), config({ handshakes: true }), config({ rules: [rule({ method: "GET" }, 500)] })]) {
      const answer = resolveAnswer(cfg, planAnswer(cfg, req()).answer, ctx({ eventId: id }));
      expect(answer.status).toBe(today.status);
      expect(Buffer.from(answer.body).equals(today.body)).toBe(true);
      expect(Object.fromEntries([...answer.headers, ["content-length", answer.body.length]])).toEqual(today.headers);
      expect(answer.delayMs).toBe(0);
    }
    expect(builtInAnswer(id)).toEqual(resolveAnswer(undefined, undefined, ctx({ eventId: id })));
  });

  it("takes each field from the answer, else the endpoint's top level, else the built-in default", () => {
    const cfg = config({ status: 202, headers: { "X-Env": "test" }, body: "top", delayMs: 50 });
    expect(resolveAnswer(cfg, undefined, ctx())).toMatchObject({ status: 202, delayMs: 50 });
    const fromRule = resolveAnswer(cfg, { status: 500, body: "rule" }, ctx());
    expect([fromRule.status, text(fromRule), fromRule.delayMs]).toEqual([500, "rule", 50]);
    expect(fromRule.headers).toContainEqual(["X-Env", "test"]);
    const partial = resolveAnswer(config({ status: 500 }), undefined, ctx({ eventId: id }));
    expect([partial.status, text(partial)]).toEqual([500, `{"ok":true,"id":"${id}"}`]);
    expect(partial.headers).toEqual([["content-type", "application/json"]]);
  });

  it("replaces the endpoint's headers with a rule's, rather than adding to them", () => {
    const cfg = config({ headers: { "X-Env": "test" } });
    const answer = resolveAnswer(cfg, { headers: { "Retry-After": "5" } }, ctx());
    expect(answer.headers.map(([n]) => n)).toEqual(["content-type", "Retry-After"]);
  });

  it("types a configured body: JSON-looking as JSON, the rest as UTF-8 text, an empty one not at all", () => {
    const typeOf = (body: string) => resolveAnswer(config({ body }), undefined, ctx()).headers.find(([n]) => n === "content-type")?.[1];
    expect(typeOf(' {"received":true}\n')).toBe("application/json");
    expect(typeOf('[{"id":"{{eventId}}"}]')).toBe("application/json");
    expect(typeOf("OK")).toBe("text/plain; charset=utf-8");
    expect(typeOf('"quoted"')).toBe("text/plain; charset=utf-8");
    expect(typeOf("")).toBeUndefined();
  });

  it("keeps a configured Content-Type, in any case, and adds none", () => {
    const answer = resolveAnswer(config({ body: "<Response/>", headers: { "Content-TYPE": "application/xml" } }), undefined, ctx());
    expect(answer.headers).toEqual([["Content-TYPE", "application/xml"]]);
  });

  it("sends no body and no type with 204, 205 and 304", () => {
    for (const status of [204, 205, 304]) {
      const answer = resolveAnswer(config({ status, body: "ignored" }), undefined, ctx());
      expect([answer.body.length, answer.headers]).toEqual([0, []]);
      expect(resolveAnswer(config({ status }), undefined, ctx()).body.length).toBe(0);
    }
  });

  it("never passes on a framing header, even from a configuration the schema would now refuse", () => {
    const stored = { headers: { "Content-Length": "1", "transfer-encoding": "chunked", Connection: "close", Host: "x", "X-Ok": "1" } };
    expect(resolveAnswer(stored as EndpointResponseConfig, undefined, ctx()).headers.map(([n]) => n)).toEqual(["content-type", "X-Ok"]);
  });

  it("renders templates in the body and the header values", () => {
    const cfg = config({ headers: { "X-Tenant": "{{query.tenant}}" }, body: '{"id":"{{eventId}}"}' });
    const answer = resolveAnswer(cfg, undefined, ctx());
    expect(text(answer)).toBe(`{"id":"${id}"}`);
    expect(answer.headers).toContainEqual(["X-Tenant", "a"]);
  });

  it("lets no substituted value add a header on the wire", async () => {
    const cfg = config({ headers: { "X-Echo": "{{query.v}}" }, body: "ok" });
    const answer = resolveAnswer(cfg, undefined, ctx({ path: "/?v=1%0D%0ASet-Cookie:%20x=1" }));
    expect(answer.headers.filter(([n]) => n === "X-Echo")).toEqual([["X-Echo", "1Set-Cookie: x=1"]]);
    const server = createServer((_, res) => {
      res.writeHead(answer.status, answer.headers.flat());
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(response.headers.get("set-cookie")).toBeNull();
      expect(response.headers.get("x-echo")).toBe("1Set-Cookie: x=1");
      expect(await response.text()).toBe("ok");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
