import { describe, expect, it } from "vitest";
import { canonicalEventType, MAX_EVENT_TYPE_LENGTH, PROVIDERS, type HeaderPair } from "./index.js";

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("canonicalEventType across providers", () => {
  const binary = Buffer.from([0x7b, 0x22, 0x74, 0xff, 0x00, 0xfe, 0x22, 0x7d]);
  const headers: HeaderPair[] = [["Content-Type", "application/x-www-form-urlencoded"]];

  it.each(PROVIDERS.filter((p) => p !== "github" && p !== "shopify"))("is empty for %s when the body is binary, empty or not JSON", (provider) => {
    expect(canonicalEventType(provider, headers, binary)).toBe("");
    expect(canonicalEventType(provider, headers, new Uint8Array())).toBe("");
    expect(canonicalEventType(provider, headers, Buffer.from("type=x"))).toBe("");
    expect(canonicalEventType(provider, headers, Buffer.from("null"))).toBe("");
  });

  it("caps event types at 200 characters", () => {
    const long = "x".repeat(500);
    expect(canonicalEventType("stripe", [], json({ type: long }))).toBe("x".repeat(MAX_EVENT_TYPE_LENGTH));
    expect(canonicalEventType("shopify", [["X-Shopify-Topic", long]], new Uint8Array())).toHaveLength(200);
    expect(canonicalEventType("github", [["X-GitHub-Event", "pull_request"]], json({ action: long }))).toHaveLength(200);
    expect(canonicalEventType("github", [["X-GitHub-Event", "pull_request"]], json({ action: long })).startsWith("pull_request.xxx")).toBe(true);
  });

  it("never cuts a surrogate pair in half", () => {
    const type = `${"x".repeat(199)}😀tail`;
    const capped = canonicalEventType("generic", [], json({ type }));
    expect(capped).toBe("x".repeat(199));
    expect(canonicalEventType("generic", [], json({ type: "😀".repeat(150) }))).toBe("😀".repeat(100));
  });

  it("keeps a type of exactly 200 characters whole", () => {
    expect(canonicalEventType("standard_webhooks", [], json({ type: "y".repeat(200) }))).toBe("y".repeat(200));
  });

  it("reads a 1 MiB body", () => {
    const body = json({ padding: "p".repeat(1024 * 1024), type: "big.event" });
    expect(body.length).toBeGreaterThan(1024 * 1024);
    expect(canonicalEventType("stripe", [], body)).toBe("big.event");
  });

  it("reads a body with a UTF-8 byte order mark and surrounding whitespace", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(' \n {"type":"with.bom"} \n')]);
    expect(canonicalEventType("stripe", [], body)).toBe("with.bom");
  });
});
