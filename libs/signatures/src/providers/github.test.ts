import { createHmac } from "node:crypto";
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SECRET = "gh-webhook-secret";
const PAYLOAD = '{"action":"opened","number":7,"pull_request":{"title":"naïve ✓"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");

const verify = verifierFor("github", SECRET, BODY);

const valueOf = (headers: readonly HeaderPair[], name: string) => headers.find(([n]) => n === name)?.[1];

describe("github verification", () => {
  it("accepts a signature made by @octokit/webhooks-methods", async () => {
    expect(verify([["X-Hub-Signature-256", await octokitSign(SECRET, PAYLOAD)]])).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
  });

  it("matches GitHub's documented test vector", () => {
    const body = Buffer.from("Hello, World!");
    const headers: HeaderPair[] = [["X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"]];
    expect(verdict(verify(headers, { body, secret: Buffer.from("It's a Secret to Everybody") }))).toBe("verified");
  });

  it.each(["x-hub-signature-256", "X-HUB-SIGNATURE-256"])("matches the header name %s case-insensitively", async (name) => {
    expect(verdict(verify([[name, await octokitSign(SECRET, PAYLOAD)]]))).toBe("verified");
  });

  it("accepts upper-case hex", async () => {
    const sig = await octokitSign(SECRET, PAYLOAD);
    expect(verdict(verify([["X-Hub-Signature-256", `sha256=${sig.slice(7).toUpperCase()}`]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", async () => {
    expect(verdict(verify([["X-Hub-Signature-256", await octokitSign("not-the-secret", PAYLOAD)]]))).toBe("signature_mismatch");
    expect(verdict(verify([["X-Hub-Signature-256", await octokitSign(SECRET, `${PAYLOAD}\n`)]]))).toBe("signature_mismatch");
  });

  it("reports a missing header, even when only the SHA-1 header came", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    const sha1 = `sha1=${createHmac("sha1", SECRET).update(BODY).digest("hex")}`;
    expect(verdict(verify([["X-Hub-Signature", sha1]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no prefix", "a".repeat(64)],
    ["other algorithm", `sha1=${"a".repeat(40)}`],
    ["non-hex", `sha256=${"g".repeat(64)}`],
    ["short digest", "sha256=abcdef"],
    ["odd length", `sha256=${"a".repeat(63)}`],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["X-Hub-Signature-256", value]]))).toBe("malformed_signature");
  });

  it("uses the first X-Hub-Signature-256 when the header repeats", async () => {
    const good = await octokitSign(SECRET, PAYLOAD);
    const bad = await octokitSign("other", PAYLOAD);
    expect(verdict(verify([["X-Hub-Signature-256", good], ["X-Hub-Signature-256", bad]]))).toBe("verified");
    expect(verdict(verify([["X-Hub-Signature-256", bad], ["X-Hub-Signature-256", good]]))).toBe("signature_mismatch");
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0x00, 0xff, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0x00]);
    const headers: HeaderPair[] = [["X-Hub-Signature-256", `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`]];
    expect(verdict(verify(headers, { body }))).toBe("verified");
    expect(verdict(verify(headers, { body: Buffer.concat([body, Buffer.from([0])]) }))).toBe("signature_mismatch");
  });
});

describe("github signing", () => {
  it("sets both hub signatures, which octokit and our verifier accept", async () => {
    const signed = signHeaders({ provider: "github", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed.map(([name]) => name)).toEqual(["X-Hub-Signature-256", "X-Hub-Signature"]);
    const sha256 = valueOf(signed, "X-Hub-Signature-256")!;
    expect(await octokitVerify(SECRET, PAYLOAD, sha256)).toBe(true);
    expect(await octokitVerify("other", PAYLOAD, sha256)).toBe(false);
    expect(sha256).toBe(await octokitSign(SECRET, PAYLOAD));
    expect(valueOf(signed, "X-Hub-Signature")).toBe(`sha1=${createHmac("sha1", SECRET).update(BODY).digest("hex")}`);
    expect(verdict(verify(signed))).toBe("verified");
  });

  it("round-trips a binary body through our verifier", () => {
    const body = Buffer.from([0xff, 0x00, 0xfe]);
    const signed = signHeaders({ provider: "github", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
    expect(verdict(verify(signed, { body: Buffer.from([0xff, 0x00, 0xff]) }))).toBe("signature_mismatch");
  });
});

describe("github event type", () => {
  const event = (name: string | undefined, body: string | Uint8Array) =>
    canonicalEventType("github", name === undefined ? [] : [["X-GitHub-Event", name]], typeof body === "string" ? Buffer.from(body) : body);

  it("is the X-GitHub-Event header plus the body's action", () => {
    expect(event("pull_request", '{"action":"opened"}')).toBe("pull_request.opened");
    expect(canonicalEventType("github", [["x-github-event", "issues"]], Buffer.from('{"action":"closed"}'))).toBe("issues.closed");
  });

  it("is the header alone when there is no string action", () => {
    expect(event("push", '{"ref":"refs/heads/main"}')).toBe("push");
    expect(event("check_run", '{"action":5}')).toBe("check_run");
    expect(event("check_run", '{"action":""}')).toBe("check_run");
    expect(event("ping", "not json")).toBe("ping");
    expect(event("ping", Buffer.from([0xff, 0x00]))).toBe("ping");
  });

  it("is empty without the header", () => {
    expect(event(undefined, '{"action":"opened"}')).toBe("");
  });

  it("reads the action of a hook sent as a form (content type application/x-www-form-urlencoded)", () => {
    const form = `payload=${encodeURIComponent(JSON.stringify({ action: "opened", number: 7 }))}`;
    const headers: [string, string][] = [
      ["X-GitHub-Event", "pull_request"],
      ["Content-Type", "application/x-www-form-urlencoded"],
    ];
    expect(canonicalEventType("github", headers, Buffer.from(form))).toBe("pull_request.opened");
    // The same text sent as anything but a form is not read as one.
    expect(canonicalEventType("github", [["X-GitHub-Event", "pull_request"], ["Content-Type", "text/plain"]], Buffer.from(form))).toBe(
      "pull_request",
    );
  });
});
