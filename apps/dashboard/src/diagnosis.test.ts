import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { CHECK_NAMES, diagnostic, diagnosticWritten, HANDSHAKE_NAMES, LIKELY_CAUSES, MATCHED_SECRETS, RESPONSE_SOURCES, VERIFICATIONS } from "@whc/api-model";
import { describeDiagnosis, LIKELY_CAUSE_TITLES, likelyCauseTitle, readDiagnostic } from "./diagnosis.js";

const labels: Record<string, string> = { stripe: "Stripe" };
const ctx = { responseCode: 200, providerLabel: (name: string) => labels[name] };
const view = (raw: Record<string, unknown>, code = 200) => describeDiagnosis(readDiagnostic(raw), { ...ctx, responseCode: code });

describe("the diagnosis of an event detail", () => {
  it("says nothing for an older event's empty diagnostic", () => {
    expect(view({})).toEqual({ checks: [] });
  });

  it("names every likely cause of design §12 in words", () => {
    const causes = ["none", "header_missing", "header_malformed", "wrong_scheme", "stale_timestamp", "future_timestamp", "wrong_secret", "secret_format", "body_reserialized", "body_newline_changed", "url_mismatch"];
    expect(Object.keys(LIKELY_CAUSE_TITLES).sort()).toEqual([...causes].sort());
    for (const c of causes) expect(likelyCauseTitle(c)).not.toMatch(/_|undefined/);
    expect(likelyCauseTitle("body_reserialized")).toBe("The body was changed on the way");
    // A cause the server learns later still reads as words.
    expect(likelyCauseTitle("clock_drift")).toBe("clock drift");
  });

  it("maps a failed signature: verdict, provider and header, cause, explanation, skew, checks", () => {
    const v = view({
      signature: {
        provider: "stripe",
        header: "Stripe-Signature",
        verdict: "failed",
        likelyCause: "stale_timestamp",
        explanation: "Replay it with mode resign.",
        skewSeconds: 412,
        toleranceSeconds: 300,
        matchedSecret: "none",
        checks: [{ name: "header_present", ok: true }, { name: "timestamp_fresh", ok: false }],
      },
    });
    expect(v).toEqual({
      verdict: "failed",
      source: "Stripe · read from Stripe-Signature",
      cause: { title: "The signature is too old", explanation: "Replay it with mode resign." },
      skew: "signed 412 s ago; Stripe accepts 300 s",
      checks: [
        { label: "signature header present", ok: true },
        { label: "timestamp within tolerance", ok: false },
      ],
    });
  });

  it("shows a future timestamp, and a skew without a tolerance, without inventing one", () => {
    expect(view({ signature: { skewSeconds: -40, toleranceSeconds: 300 } }).skew).toBe("signed 40 s in the future; the provider accepts 300 s");
    expect(view({ signature: { skewSeconds: 12 } }).skew).toBe("signed 12 s ago");
  });

  it("shows what the capture sends today: verdict, provider, the previous secret and the answer's source", () => {
    const v = view({ signature: { provider: "github", verdict: "verified", matchedSecret: "previous" }, responseSource: "rule" }, 500);
    expect(v).toEqual({
      verdict: "verified",
      source: "github",
      secret: "verified with the previous secret (rotation grace)",
      checks: [],
      answer: "answered 500 by a rule",
    });
    expect(view({ signature: { verdict: "verified", matchedSecret: "current", likelyCause: "none" } })).toEqual({ verdict: "verified", checks: [] });
  });

  it("says a failure was looked at even when no cause stands out", () => {
    expect(view({ signature: { verdict: "failed", likelyCause: "none" } }).cause).toEqual({ title: "No single cause stands out" });
  });

  it("names handshakes and each response source", () => {
    expect(view({ handshake: "zoom_url_validation", responseSource: "handshake" }).answer).toBe("answered Zoom's URL validation with 200");
    expect(view({ handshake: "dropbox_challenge" }, 0).answer).toBe("answered Dropbox's challenge");
    // A value outside the schema's list (a newer ingest during an upgrade) is not shown at all.
    expect(view({ handshake: "acme_ping" }, 0).answer).toBeUndefined();
    expect(view({ responseSource: "default" }).answer).toBe("answered 200 as the endpoint's default");
    expect(view({ responseSource: "sequence" }, 503).answer).toBe("answered 503 from the response sequence");
    expect(view({ responseSource: "forward_failed" }, 502).answer).toBe("answered 502 because forwarding failed");
  });

  it("shows the content type only when it does not match the body", () => {
    expect(view({ contentType: { declared: "application/json", bodyIs: "form", mismatch: true } }).contentType).toBe("declared application/json, body is form data");
    expect(view({ contentType: { bodyIs: "json", mismatch: true } }).contentType).toBe("no Content-Type declared, body is JSON");
    expect(view({ contentType: { declared: "application/json", bodyIs: "json", mismatch: false } }).contentType).toBeUndefined();
  });

  it("keeps the body hash, and treats fields of the wrong type as absent", () => {
    expect(view({ bodySha256: "ab".repeat(32) }).bodySha256).toBe("ab".repeat(32));
    const odd = view({ bodySha256: 7, signature: { verdict: "maybe", provider: null, skewSeconds: "412", checks: [{ name: "x" }, "y"] }, contentType: "json", handshake: {} });
    expect(odd).toEqual({ checks: [] });
    expect(JSON.stringify(odd)).not.toContain("undefined");
  });
});

describe("readDiagnostic against the /v1 schema", () => {
  const written = {
    bodySha256: "ab".repeat(32),
    contentType: { declared: "application/json", bodyIs: "json", mismatch: false },
    signature: {
      provider: "stripe",
      header: "Stripe-Signature",
      verdict: "failed",
      likelyCause: "stale_timestamp",
      explanation: "Replay it with mode resign.",
      skewSeconds: 412,
      toleranceSeconds: 300,
      matchedSecret: "none",
      checks: [{ name: "header_present", ok: true }, { name: "timestamp_fresh", ok: false }],
    },
    handshake: "zoom_url_validation",
    responseSource: "handshake",
  };

  it("reads what ingest writes exactly as the schema parses it", () => {
    expect(diagnosticWritten.parse(written)).toEqual(written);
    expect(readDiagnostic(written)).toEqual(diagnostic.parse(written));
    const minimal = { contentType: { declared: null, bodyIs: "empty", mismatch: false }, responseSource: "default" };
    expect(readDiagnostic(minimal)).toEqual(diagnostic.parse(minimal));
  });

  it("drops exactly the fields the schema refuses, and agrees with it on every diagnostic it accepts", () => {
    const junk = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]));
    const field = <T>(valid: fc.Arbitrary<T>) => fc.option(fc.oneof(valid, valid, junk), { nil: undefined });
    const arbitrary = fc.record(
      {
        bodySha256: field(fc.stringMatching(/^[0-9a-f]{64}$/)),
        responseSource: field(fc.constantFrom(...RESPONSE_SOURCES)),
        handshake: field(fc.constantFrom(...HANDSHAKE_NAMES)),
        signature: field(
          fc.record(
            {
              provider: field(fc.constantFrom("stripe", "github")),
              verdict: field(fc.constantFrom(...VERIFICATIONS)),
              likelyCause: field(fc.constantFrom(...LIKELY_CAUSES)),
              matchedSecret: field(fc.constantFrom(...MATCHED_SECRETS)),
              skewSeconds: field(fc.integer({ min: -1000, max: 1000 })),
              checks: field(fc.array(fc.record({ name: fc.constantFrom(...CHECK_NAMES), ok: fc.boolean() }), { minLength: 1, maxLength: 3 })),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(arbitrary, (raw) => {
        const clean = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
        const read = readDiagnostic(clean);
        // What the reader keeps, the schema accepts as it is.
        expect(diagnostic.parse(read)).toEqual(read);
        // Where the schema accepts the whole object, the reader reads all of it.
        const parsed = diagnostic.safeParse(clean);
        if (parsed.success) expect(read).toEqual(parsed.data);
      }),
      { numRuns: 2000 },
    );
  });
});
