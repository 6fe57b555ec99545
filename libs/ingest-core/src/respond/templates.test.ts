import { validateHeaderValue } from "node:http";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createTemplateScope,
  headerSafeValue,
  MAX_RENDERED_BODY_BYTES,
  MAX_TEMPLATE_JSON_BYTES,
  renderBody,
  renderHeaderValue,
  type TemplateContext,
} from "./templates.js";

const json = {
  order: { id: "ord_1", total: 12.5, paid: true, note: null, items: [{ sku: "a" }, { sku: "b", tags: ["x", "y"] }] },
  name: "Zoë ☕",
};

function context(partial: Omit<Partial<TemplateContext>, "body"> & { body?: Uint8Array | string } = {}): TemplateContext {
  const body = partial.body ?? JSON.stringify(json);
  return {
    eventId: partial.eventId ?? "0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111",
    receivedAtMs: partial.receivedAtMs ?? Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    path: partial.path ?? "/orders/7?tenant=a%20b&tenant=second&empty=",
    headers: partial.headers ?? [
      ["X-Tenant", "acme"],
      ["x-tenant", "later copy"],
      ["X-Utf8", Buffer.from("café ☕").toString("latin1")],
    ],
    body: typeof body === "string" ? new Uint8Array(Buffer.from(body)) : body,
  };
}

const body = (template: string, ctx = context()) => Buffer.from(renderBody(template, createTemplateScope(ctx))).toString("utf8");
const headerValue = (template: string, ctx = context()) => renderHeaderValue(template, createTemplateScope(ctx));

afterEach(() => vi.restoreAllMocks());

describe("placeholders", () => {
  it("read the event and the request", () => {
    expect(body("{{eventId}}|{{receivedAt}}")).toBe("0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111|2026-01-02T03:04:05.678Z");
    expect(body("{{query.tenant}}|{{query.empty}}|{{query.none}}")).toBe("a b||");
    expect(body("{{header.x-tenant}}|{{header.X-TENANT}}|{{header.missing}}")).toBe("acme|acme|");
  });

  it("read JSON bodies by path: strings as they are, numbers, booleans, null, objects and arrays as JSON", () => {
    expect(body("{{body.order.id}} {{body.order.total}} {{body.order.paid}} {{body.order.note}}")).toBe("ord_1 12.5 true null");
    expect(body("{{body.order.items.1.sku}} {{body.order.items.1.tags}} {{body.order.items.0}}")).toBe('b ["x","y"] {"sku":"a"}');
    expect(body("{{body.name}}")).toBe("Zoë ☕");
  });

  it("render a missing value empty", () => {
    expect(body("[{{body.order.missing}}][{{body.order.items.9}}][{{body.order.id.x}}][{{body.order.items.01}}]")).toBe("[][][][]");
    expect(body("[{{body.a}}]", context({ body: "not json" }))).toBe("[]");
    expect(body("[{{body.a}}]", context({ body: "" }))).toBe("[]");
    expect(body("[{{body.a}}]", context({ body: new Uint8Array([0x7b, 0xff, 0x7d]) }))).toBe("[]");
  });

  it("allow spaces inside the braces", () => {
    expect(body("{{ eventId }}/{{  query.tenant}}")).toBe("0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111/a b");
  });

  it("leave anything else between double braces exactly as written", () => {
    const literal = "{{event_id}} {{body}} {{query.}} {{body.a..b}} {{ a b }} {{#each items}} {{{eventId}}} {eventId}";
    expect(body(literal)).toBe(literal.replace("{{{eventId}}}", "{0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111}"));
  });

  it("skip JSON bodies over the parse limit", () => {
    const big = JSON.stringify({ a: "x", pad: "p".repeat(MAX_TEMPLATE_JSON_BYTES) });
    expect(body("[{{body.a}}]", context({ body: big }))).toBe("[]");
  });
});

describe("nothing but the request is read", () => {
  const probes = [
    "{{process.env.HOME}}",
    "{{env.HOME}}",
    "{{constructor}}",
    "{{__proto__}}",
    "{{this}}",
    "{{global.process}}",
    "{{require('fs')}}",
    "{{body.__proto__}}",
    "{{body.constructor}}",
    "{{body.constructor.name}}",
    "{{body.order.toString}}",
    "{{body.order.items.length}}",
    "{{body.name.length}}",
    "{{body.order.hasOwnProperty}}",
    "{{query.constructor}}",
    "{{query.__proto__}}",
    "{{header.constructor}}",
    "{{header.__proto__}}",
    "{{eventId.constructor}}",
  ];

  it("renders every probe as itself or as nothing, never as something of the process", () => {
    for (const probe of probes) {
      const out = body(probe);
      expect([probe, ""]).toContain(out);
      expect(out).not.toContain(process.env["HOME"] ?? "/root");
    }
  });

  it("reads a sender's own __proto__ key as data, and pollutes nothing", () => {
    const ctx = context({ body: '{"__proto__":{"polluted":"yes"},"constructor":{"name":"mine"}}' });
    expect(body("{{body.__proto__.polluted}} {{body.constructor.name}}", ctx)).toBe("yes mine");
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("the JSON body", () => {
  it("is parsed once per request, however many placeholders read it", () => {
    const parse = vi.spyOn(JSON, "parse");
    const scope = createTemplateScope(context());
    renderBody("{{body.order.id}} {{body.order.total}} {{body.name}}", scope);
    renderHeaderValue("{{body.order.id}}", scope);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it("is not parsed at all when no placeholder reads it", () => {
    const parse = vi.spyOn(JSON, "parse");
    const scope = createTemplateScope(context());
    renderBody('{"id":"{{eventId}}","tenant":"{{query.tenant}}","h":"{{header.x-tenant}}","x":"{{body}}"}', scope);
    renderHeaderValue("{{receivedAt}}", scope);
    expect(parse).not.toHaveBeenCalled();
  });
});

describe("bodies", () => {
  it("keep values as they are, each in the bytes it arrived as", () => {
    const bytes = renderBody("{{header.x-utf8}}|{{query.q}}", createTemplateScope(context({ path: "?q=%E2%98%95%0D%0A" })));
    expect(Buffer.from(bytes).toString("utf8")).toBe("café ☕|☕\r\n");
  });

  it("are cut at the rendered-body limit however many placeholders repeat a large value", () => {
    const ctx = context({ body: JSON.stringify({ big: "b".repeat(400 * 1024) }) });
    const rendered = renderBody("{{body.big}}".repeat(10), createTemplateScope(ctx));
    expect(rendered.length).toBe(MAX_RENDERED_BODY_BYTES);
  });
});

describe("header values", () => {
  it("cannot gain a header from a substituted value", () => {
    const ctx = context({ path: "?v=a%0D%0ASet-Cookie%3A%20x%0D%0A%0D%0A%00<html>" });
    const value = headerValue("id={{query.v}}", ctx);
    expect(value).toBe("id=aSet-Cookie: x<html>");
    expect(value).not.toMatch(/[\r\n\0]/);
    expect(() => validateHeaderValue("X-Echo", value)).not.toThrow();
  });

  it("send text above ASCII as its UTF-8 bytes, and received header values as the bytes they were", () => {
    const value = headerValue("{{query.q}}|{{header.x-utf8}}", context({ path: "?q=%C3%A9%E2%98%95" }));
    expect(Buffer.from(value, "latin1").toString("utf8")).toBe("é☕|café ☕");
  });

  it("drop control characters from text (C0, DEL, C1) and from received bytes (C0, DEL)", () => {
    expect(headerSafeValue({ kind: "text", value: "a\tb\x7fc\x85d\u2028e" })).toBe(Buffer.from("abcd\u2028e").toString("latin1"));
    expect(headerSafeValue({ kind: "bytes", value: "a\tb\x7fc\x85d" })).toBe("abc\x85d");
  });

  it("are always a valid header value with no line break, whatever the request held (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.constantFrom<"text" | "bytes">("text", "bytes"), (value, kind) => {
        const safe = headerSafeValue({ kind, value });
        expect(safe).not.toMatch(/[\r\n\0]/);
        expect(() => validateHeaderValue("X-Echo", safe)).not.toThrow();
      }),
    );
  });

  it("keep the configured literal text and clean only what a laxer configuration could carry", () => {
    expect(headerValue("max-age=60, {{eventId}}\tend")).toBe("max-age=60, 0b7e0a3e-51c4-4bd5-9f0b-2f8f39a4a111\tend");
    expect(headerValue("a\r\nb")).toBe("ab");
  });
});
