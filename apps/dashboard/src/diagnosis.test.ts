import { describe, it, expect } from "vitest";
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
        checks: [{ name: "header_present", ok: true }, { name: "timestamp_fresh", ok: false }, { name: "new_check", ok: true }],
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
        { label: "new check", ok: true },
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
    expect(view({ handshake: "acme_ping" }, 0).answer).toBe("answered the acme ping handshake");
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
