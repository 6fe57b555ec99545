import { describe, it, expect } from "vitest";
import { deduperOf, type DedupeInput } from "./dedupe.js";

const stripeEvent = (id: string) => Buffer.from(JSON.stringify({ id, object: "event", type: "invoice.paid", data: { object: { id: "in_1" } } }));
const input = (overrides: Partial<DedupeInput> = {}): DedupeInput => ({ provider: "stripe", headers: [], body: stripeEvent("evt_1"), rest: "", ...overrides });

describe("an endpoint's deduper (design §17)", () => {
  it("is undefined without settings, or with settings that do not read", () => {
    expect(deduperOf("")).toBeUndefined();
    expect(deduperOf("{not json")).toBeUndefined();
    expect(deduperOf('{"windowSeconds":0,"key":"auto"}')).toBeUndefined();
  });

  it("auto: the provider's own id, the same for a retry, another for another event; none when the provider sends none", () => {
    const d = deduperOf('{"windowSeconds":3600,"key":"auto"}')!;
    expect(d.windowMs).toBe(3_600_000n);
    const first = d.materialOf(input());
    expect(first).toBeDefined();
    // Stripe retries the same event with a fresh signature: the id decides, not the bytes.
    expect(d.materialOf(input({ headers: [["Stripe-Signature", "t=2,v1=ab"]], body: Buffer.from(stripeEvent("evt_1").toString().replace("in_1", "in_1 ")) }))).toBe(first);
    expect(d.materialOf(input({ body: stripeEvent("evt_2") }))).not.toBe(first);
    expect(d.materialOf(input({ provider: "github", headers: [["X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"]] }))).toBeDefined();
    // The same text from another provider is another key.
    expect(d.materialOf(input({ provider: "github", headers: [["X-GitHub-Delivery", "evt_1"]] }))).not.toBe(first);
    expect(d.materialOf(input({ provider: "generic" }))).toBeUndefined();
    expect(d.materialOf(input({ provider: "zoom" }))).toBeUndefined();
    expect(d.materialOf(input({ body: Buffer.from("{}") }))).toBeUndefined();
  });

  it("fields: their values together, an absent one as null; none of them: no key", () => {
    const d = deduperOf('{"windowSeconds":600,"fields":["header.x-request-id","body.data.id","query.attempt"]}')!;
    expect(d.windowMs).toBe(600_000n);
    const body = Buffer.from('{"data":{"id":42}}');
    const a = d.materialOf(input({ provider: "generic", headers: [["X-Request-Id", "r-1"]], body, rest: "/x?attempt=1" }));
    expect(a).toBe(JSON.stringify(["fields", "r-1", "42", "1"]));
    expect(d.materialOf(input({ provider: "generic", headers: [["x-request-id", "r-1"]], body, rest: "?attempt=1" }))).toBe(a);
    expect(d.materialOf(input({ provider: "generic", headers: [["X-Request-Id", "r-2"]], body, rest: "?attempt=1" }))).not.toBe(a);
    expect(d.materialOf(input({ provider: "generic", headers: [], body, rest: "" }))).toBe(JSON.stringify(["fields", null, "42", null]));
    expect(d.materialOf(input({ provider: "generic", headers: [], body: Buffer.from("not json"), rest: "" }))).toBeUndefined();
  });
});
