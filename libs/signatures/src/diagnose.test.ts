import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { bytesEqual, decodeHex, hmac } from "./crypto.js";
import { header as headerValue } from "./headers.js";
import { diagnoseSignature, providers, verifySignature, type DiagnoseInput, type HeaderPair, type ProviderScheme } from "./index.js";
import { malformedSignature, matched, missingSignature } from "./outcome.js";
import { NOW_MS, NOW_S } from "./testing/index.js";

const SECRET = "whsec_diagnose_test_secret";
const PAYLOAD = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: { object: { amount: 100, note: "naïve" } } });
const stripeLib = new Stripe("sk_test_x");

/** A Stripe-Signature header made by Stripe's own library. */
function stripeHeader({ payload = PAYLOAD, timestamp = NOW_S, secret = SECRET } = {}): HeaderPair[] {
  return [
    ["Content-Type", "application/json"],
    ["Stripe-Signature", stripeLib.webhooks.generateTestHeaderString({ payload, secret, timestamp })],
  ];
}

/** A Stripe capture signed with SECRET over PAYLOAD at NOW_S; `overrides` introduce the one fault. */
function diagnose(overrides: Partial<DiagnoseInput> = {}) {
  return diagnoseSignature({ provider: "stripe", headers: stripeHeader(), body: Buffer.from(PAYLOAD), secret: Buffer.from(SECRET), nowMs: NOW_MS, ...overrides });
}

/** The scheme with its verify calls counted; it reads nothing of the input, as diagnosis watches what verify reads. */
function counted(scheme: ProviderScheme): { scheme: ProviderScheme; calls: { count: number } } {
  const calls = { count: 0 };
  return { calls, scheme: { ...scheme, verify: (input) => ((calls.count += 1), scheme.verify(input)) } };
}

describe("diagnoseSignature: verified and unverified", () => {
  it("names no cause for a verified capture, with the secret that matched and the signature's age", () => {
    const d = diagnose({ headers: stripeHeader({ timestamp: NOW_S - 42 }) });
    expect(d).toMatchObject({ provider: "stripe", header: "Stripe-Signature", verdict: "verified", likelyCause: "none", matchedSecret: "current" });
    expect(d).toMatchObject({ skewSeconds: 42, toleranceSeconds: 300 });
    expect(d.checks.every((check) => check.ok)).toBe(true);
  });

  it("reports the previous secret while its grace lasts, and wrong_secret once it ended", () => {
    const rotated = { secret: Buffer.from("whsec_new_secret"), previousSecret: Buffer.from(SECRET), previousValidUntilMs: NOW_MS + 60_000 };
    const d = diagnose(rotated);
    expect(d).toMatchObject({ verdict: "verified", likelyCause: "none", matchedSecret: "previous" });
    expect(d.explanation).toContain(new Date(NOW_MS + 60_000).toISOString());
    expect(diagnose({ ...rotated, previousValidUntilMs: NOW_MS - 1 })).toMatchObject({ verdict: "failed", likelyCause: "wrong_secret", matchedSecret: "none" });
  });

  it("takes the plain outcome ingest computed, with the secret it matched", () => {
    const outcome = verifySignature({ provider: "stripe", headers: stripeHeader(), body: Buffer.from(PAYLOAD), secret: Buffer.from(SECRET), nowMs: NOW_MS });
    expect(diagnose({ secret: Buffer.from("whsec_new"), plain: { outcome, matchedSecret: "previous" } })).toMatchObject({
      verdict: "verified",
      matchedSecret: "previous",
      skewSeconds: 0,
    });
  });

  it("reads the signed time from the outcome, which keeps its plain shape", () => {
    const outcome = verifySignature({ provider: "stripe", headers: stripeHeader({ timestamp: NOW_S - 42 }), body: Buffer.from(PAYLOAD), secret: Buffer.from(SECRET), nowMs: NOW_MS });
    expect(outcome.signedAtS).toBe(NOW_S - 42);
    expect(JSON.parse(JSON.stringify(outcome))).not.toHaveProperty("signedAtS");
  });

  it("calls verify once on the happy path, and not at all when given the plain outcome", () => {
    const { scheme, calls } = counted(providers.stripe);
    const d = diagnose({ provider: scheme });
    expect(d.verdict).toBe("verified");
    expect(calls.count).toBe(1);
    const outcome = providers.stripe.verify({ headers: stripeHeader(), body: Buffer.from(PAYLOAD), secret: Buffer.from(SECRET), nowMs: NOW_MS });
    diagnose({ provider: scheme, plain: { outcome, matchedSecret: "current" } });
    expect(calls.count).toBe(1);
  });

  it("is unverified without a secret, still measuring the signature's age for replay warnings", () => {
    const d = diagnose({ secret: undefined, headers: stripeHeader({ timestamp: NOW_S - 900 }) });
    expect(d).toMatchObject({ verdict: "unverified", likelyCause: "none", matchedSecret: "none", checks: [], skewSeconds: 900, toleranceSeconds: 300 });
    expect(d.explanation).toMatch(/no secret/);
    expect(diagnose({ secret: new Uint8Array() })).toMatchObject({ verdict: "unverified", likelyCause: "none" });
  });

  it("gives each unjudged capture its own provider's and case's diagnosis when they alternate, one frozen object per case", () => {
    // Unjudged: no secret or a cut-off body, its timestamp not wanted (ingest's case on every capture).
    const stripe = (complete: boolean) => diagnose({ secret: undefined, complete, timestampOfUnverified: false });
    const generic = (complete: boolean) =>
      diagnoseSignature({ provider: "generic", genericSignatureHeader: "X-Acme-Signature", headers: [], body: Buffer.from("{}"), complete, timestampOfUnverified: false, nowMs: NOW_MS });
    const seen = [stripe(true), stripe(false), generic(true), stripe(true), generic(false), generic(true)];
    expect(seen.map((d) => [d.provider, d.header, /cut off/.test(d.explanation) ? "cut" : "no secret"])).toEqual([
      ["stripe", "Stripe-Signature", "no secret"],
      ["stripe", "Stripe-Signature", "cut"],
      ["generic", "X-Acme-Signature", "no secret"],
      ["stripe", "Stripe-Signature", "no secret"],
      ["generic", "X-Acme-Signature", "cut"],
      ["generic", "X-Acme-Signature", "no secret"],
    ]);
    expect(seen[3]).toBe(seen[0]);
    expect(seen[5]).toBe(seen[2]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });

  it("answers each verified capture its own diagnosis in any order, sharing one frozen object while it reads the same", () => {
    // The cases a run of verified captures moves between: the signature's age, the secret that
    // matched (and, for the previous one, when its grace ends), a generic endpoint's header.
    const rotated = (graceMs: number) => ({ secret: Buffer.from("whsec_new_secret"), previousSecret: Buffer.from(SECRET), previousValidUntilMs: NOW_MS + graceMs });
    const genericBody = Buffer.from(PAYLOAD);
    const generic = (name: string) => () =>
      diagnoseSignature({ provider: "generic", genericSignatureHeader: name, headers: [[name, hmac("sha256", Buffer.from(SECRET), genericBody).toString("hex")]], body: genericBody, secret: Buffer.from(SECRET), nowMs: NOW_MS });
    const cases: (() => ReturnType<typeof diagnose>)[] = [
      () => diagnose(),
      () => diagnose({ nowMs: NOW_MS + 1000 }),
      () => diagnose({ headers: stripeHeader({ timestamp: NOW_S - 42 }) }),
      () => diagnose(rotated(60_000)),
      () => diagnose(rotated(120_000)),
      () => diagnose({ toleranceS: 600 }),
      generic("X-Acme-Signature"),
      generic("X-Other-Signature"),
    ];
    // Each case's diagnosis made first, each in a run of its own.
    const alone = cases.map((make) => JSON.parse(JSON.stringify(make())) as unknown);
    expect(new Set(alone.map((d) => JSON.stringify(d))).size).toBe(cases.length);
    fc.assert(
      fc.property(fc.array(fc.nat(cases.length - 1), { minLength: 1, maxLength: 40 }), (order) => {
        let before: ReturnType<typeof diagnose> | undefined;
        let previous = -1;
        for (const i of order) {
          const d = cases[i]!();
          expect(d).toEqual(alone[i]);
          expect(Object.isFrozen(d) && Object.isFrozen(d.checks)).toBe(true);
          if (i === previous) expect(d).toBe(before);
          [before, previous] = [d, i];
        }
      }),
    );
  });

  it("is unverified when the body was cut off", () => {
    const d = diagnose({ complete: false });
    expect(d).toMatchObject({ verdict: "unverified", likelyCause: "none" });
    expect(d.explanation).toMatch(/cut off/);
  });
});

describe("diagnoseSignature: headers and timestamps", () => {
  it("names a missing header", () => {
    const d = diagnose({ headers: [["Content-Type", "application/json"]] });
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "header_missing", header: "Stripe-Signature" });
    expect(d.checks).toEqual([{ name: "header_present", ok: false }]);
    expect(d.explanation).toContain("Stripe-Signature");
  });

  it("names a garbage header", () => {
    expect(diagnose({ headers: [["Stripe-Signature", "definitely not a signature"]] })).toMatchObject({ likelyCause: "header_malformed" });
  });

  it("names the configured header of a generic endpoint", () => {
    const d = diagnoseSignature({ provider: "generic", genericSignatureHeader: "X-Acme-Signature", headers: [], body: Buffer.from("{}"), secret: Buffer.from("s"), nowMs: NOW_MS });
    expect(d).toMatchObject({ likelyCause: "header_missing", header: "X-Acme-Signature" });
    expect(d).not.toHaveProperty("toleranceSeconds");
  });

  it("names wrong_scheme for a GitHub-signed capture on an endpoint configured as Stripe", async () => {
    const headers: HeaderPair[] = [
      ["X-GitHub-Event", "push"],
      ["X-Hub-Signature-256", await octokitSign(SECRET, PAYLOAD)],
    ];
    const d = diagnose({ headers });
    expect(d).toMatchObject({ provider: "stripe", verdict: "failed", likelyCause: "wrong_scheme" });
    expect(d.explanation).toContain("GitHub");
  });

  it("names a timestamp 10 minutes old stale, with its skew and the tolerance", () => {
    const d = diagnose({ headers: stripeHeader({ timestamp: NOW_S - 600 }) });
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "stale_timestamp", skewSeconds: 600, toleranceSeconds: 300 });
    expect(d.checks).toContainEqual({ name: "timestamp_fresh", ok: false });
    expect(d.explanation).toMatch(/600 s/);
  });

  it("names a timestamp in the future", () => {
    const d = diagnose({ headers: stripeHeader({ timestamp: NOW_S + 600 }) });
    expect(d).toMatchObject({ likelyCause: "future_timestamp", skewSeconds: -600, toleranceSeconds: 300 });
  });

  it("applies the endpoint's tolerance when it sets one", () => {
    expect(diagnose({ headers: stripeHeader({ timestamp: NOW_S - 600 }), toleranceS: 900 })).toMatchObject({ verdict: "verified", toleranceSeconds: 900 });
  });

  it("blames the secret, not the clock, when a stale signature does not match either", () => {
    expect(diagnose({ headers: stripeHeader({ timestamp: NOW_S - 600, secret: "whsec_other" }) })).toMatchObject({ likelyCause: "wrong_secret", skewSeconds: 600 });
  });
});

describe("diagnoseSignature: secrets", () => {
  it("names wrong_secret for a different secret", () => {
    const d = diagnose({ secret: Buffer.from("whsec_someone_elses") });
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "wrong_secret", matchedSecret: "none" });
    expect(d.explanation).toContain("whsec_");
  });

  it("names secret_format for a secret with a trailing newline", () => {
    const d = diagnose({ secret: Buffer.from(`${SECRET}\n`) });
    expect(d).toMatchObject({ likelyCause: "secret_format" });
    expect(d.explanation).toMatch(/whitespace/);
  });

  it("names secret_format for a Stripe API key, showing only its prefix", () => {
    const key = "sk_test_51HxYzVeryPrivateKeyMaterial";
    const d = diagnose({ secret: Buffer.from(key) });
    expect(d).toMatchObject({ likelyCause: "secret_format" });
    expect(d.explanation).toContain("sk_test_");
    expect(d.explanation).not.toContain(key);
  });

  it("names secret_format for a Stripe secret entered without its whsec_ prefix", () => {
    expect(diagnose({ secret: Buffer.from(SECRET.slice("whsec_".length)) })).toMatchObject({ likelyCause: "secret_format" });
  });

  it("names secret_format for a Standard Webhooks key entered without whsec_", () => {
    const key = randomBytes(24).toString("base64");
    const wh = new Webhook(`whsec_${key}`);
    const headers: HeaderPair[] = [
      ["webhook-id", "msg_1"],
      ["webhook-timestamp", String(NOW_S)],
      ["webhook-signature", wh.sign("msg_1", new Date(NOW_MS), PAYLOAD)],
    ];
    const d = diagnose({ provider: "standard_webhooks", headers, secret: Buffer.from(key) });
    expect(d).toMatchObject({ likelyCause: "secret_format", header: "webhook-signature" });
  });
});

describe("diagnoseSignature: bodies", () => {
  it("names body_reserialized for a Stripe body pretty-printed after signing", () => {
    const d = diagnose({ body: Buffer.from(JSON.stringify(JSON.parse(PAYLOAD), null, 2)) });
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "body_reserialized" });
    expect(d.explanation).toMatch(/re-serialized.*Stripe.*minified.*raw bytes/);
  });

  it("names body_reserialized for a body signed indented by 4 spaces and minified on the way", () => {
    const signed = JSON.stringify(JSON.parse(PAYLOAD), null, 4);
    const d = diagnose({ headers: stripeHeader({ payload: signed }), body: Buffer.from(PAYLOAD) });
    expect(d).toMatchObject({ likelyCause: "body_reserialized" });
    expect(d.explanation).toContain("indented by 4 spaces");
  });

  it("does not re-serialize bodies over the bound", () => {
    const big = JSON.stringify({ blob: "x".repeat(300 * 1024) });
    const d = diagnose({ headers: stripeHeader({ payload: big }), body: Buffer.from(JSON.stringify(JSON.parse(big), null, 2)) });
    expect(d.likelyCause).toBe("wrong_secret");
  });

  it("names body_newline_changed for a trailing newline added", () => {
    const d = diagnose({ body: Buffer.from(`${PAYLOAD}\n`) });
    expect(d).toMatchObject({ likelyCause: "body_newline_changed" });
    expect(d.explanation).toMatch(/trailing newline was added/);
  });

  it("names body_newline_changed for a trailing newline removed", () => {
    const d = diagnose({ headers: stripeHeader({ payload: `${PAYLOAD}\n` }) });
    expect(d).toMatchObject({ likelyCause: "body_newline_changed" });
    expect(d.explanation).toMatch(/removed/);
  });

  it("names body_newline_changed for LF turned into CRLF", async () => {
    const signed = "line one\nline two\n";
    const headers: HeaderPair[] = [["X-Hub-Signature-256", await octokitSign("gh-secret", signed)]];
    const d = diagnoseSignature({ provider: "github", headers, body: Buffer.from(signed.replaceAll("\n", "\r\n")), secret: Buffer.from("gh-secret"), nowMs: NOW_MS });
    expect(d).toMatchObject({ provider: "github", header: "X-Hub-Signature-256", likelyCause: "body_newline_changed" });
    expect(d.explanation).toContain("LF was turned into CRLF");
  });

  it("never tries URL variants on a scheme that does not sign the URL", () => {
    const tries = (url: string | undefined) => {
      const { scheme, calls } = counted(providers.stripe);
      expect(diagnose({ provider: scheme, url, secret: Buffer.from("whsec_other") }).likelyCause).toBe("wrong_secret");
      return calls.count;
    };
    expect(tries(undefined)).toBeGreaterThan(1);
    expect(tries("https://hooks.example.test/in/abc")).toBe(tries(undefined));
  });
});

/** A URL-signed scheme in Twilio's manner: hex HMAC-SHA256 of the URL then the body. */
const urlSigned: ProviderScheme = {
  ...providers.generic,
  name: "url_signed",
  label: "URL Signer",
  signatureHeaders: ["X-Url-Signature"],
  verify(input) {
    const value = headerValue(input.headers, "X-Url-Signature");
    if (value === undefined) return missingSignature();
    const digest = decodeHex(value);
    if (digest === undefined) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.url ?? "", input.body)));
  },
};

describe("diagnoseSignature: URLs", () => {
  const signedFor = (url: string): HeaderPair => ["X-Url-Signature", hmac("sha256", Buffer.from("s"), url, PAYLOAD).toString("hex")];
  const diagnoseUrl = (url: string, headers: HeaderPair[]) =>
    diagnoseSignature({ provider: urlSigned, headers, body: Buffer.from(PAYLOAD), url, secret: Buffer.from("s"), nowMs: NOW_MS });

  it("verifies the URL it was given", () => {
    expect(diagnoseUrl("https://a.test/in/x", [signedFor("https://a.test/in/x")]).verdict).toBe("verified");
  });

  it.each([
    ["http and https swapped", "http://a.test/in/x", "https://a.test/in/x", []],
    ["a trailing slash", "https://a.test/in/x", "https://a.test/in/x/", []],
    ["the forwarded host", "https://internal:8080/in/x", "https://hooks.example.test/in/x", [["X-Forwarded-Host", "hooks.example.test"]]],
    ["the Host header over https", "http://internal:8080/in/x", "https://public.test/in/x", [["Host", "public.test"]]],
    ["a path prefix a proxy removed", "https://a.test/hooks/in/x", "https://a.test/in/x", []],
  ] as const)("names url_mismatch for %s", (_, computed, signed, extra) => {
    const d = diagnoseUrl(computed, [signedFor(signed), ...extra]);
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "url_mismatch" });
    expect(d.explanation).toContain(signed);
  });

  it("never names a URL's query in the diagnosis, which is stored in clear", () => {
    const d = diagnoseUrl("http://a.test/in/x?token=QuerySecret", [signedFor("https://a.test/in/x?token=QuerySecret")]);
    expect(d).toMatchObject({ verdict: "failed", likelyCause: "url_mismatch" });
    expect(d.explanation).toContain("https://a.test/in/x");
    expect(JSON.stringify(d)).not.toContain("QuerySecret");
  });

  it("falls back to wrong_secret when no URL variant matches", () => {
    expect(diagnoseUrl("https://a.test/in/x", [signedFor("https://elsewhere.test/other")]).likelyCause).toBe("wrong_secret");
  });
});
