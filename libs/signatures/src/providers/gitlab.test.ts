import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// GitLab publishes no library that checks the token; its documentation ("Validate payloads by
// using a secret token", docs.gitlab.com/user/project/integrations/webhooks) says the Secret
// token is sent unchanged in X-Gitlab-Token, so the expected header is the token itself.
const SECRET = "gl-hook-s3cret";
const BODY = Buffer.from('{"object_kind":"push","event_name":"push","ref":"refs/heads/main"}');

const verify = verifierFor("gitlab", SECRET, BODY);
const sample = (token: string): HeaderPair[] => [
  ["Content-Type", "application/json"],
  ["X-Gitlab-Event", "Push Hook"],
  ["X-Gitlab-Token", token],
  ["X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e"],
];

describe("gitlab verification", () => {
  it("accepts the secret token GitLab sends", () => {
    expect(verify(sample(SECRET))).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify([["x-gitlab-token", SECRET]]))).toBe("verified");
  });

  it("rejects a wrong token, a prefix of the secret and a longer one", () => {
    expect(verdict(verify(sample("other")))).toBe("signature_mismatch");
    expect(verdict(verify(sample(SECRET.slice(0, -1))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(`${SECRET}x`)))).toBe("signature_mismatch");
    expect(verdict(verify(sample(SECRET), { secret: Buffer.from("other") }))).toBe("signature_mismatch");
  });

  it("does not depend on the body: GitLab signs nothing", () => {
    expect(verdict(verify(sample(SECRET), { body: Buffer.from("anything") }))).toBe("verified");
  });

  it("reports a missing header, even when the event header came", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Gitlab-Event", "Push Hook"]]))).toBe("missing_signature");
  });

  it("reports an empty token as malformed", () => {
    expect(verdict(verify([["X-Gitlab-Token", ""]]))).toBe("malformed_signature");
    expect(verdict(verify([["X-Gitlab-Token", "   "]]))).toBe("malformed_signature");
  });
});

describe("gitlab detection, event type and signing", () => {
  it("is detected by its own headers", () => {
    expect(detectProvider(sample(SECRET))).toBe("gitlab");
    expect(detectProvider([["X-Gitlab-Event", "Push Hook"]])).toBe("gitlab");
  });

  it("names the event by X-Gitlab-Event", () => {
    expect(canonicalEventType("gitlab", sample(SECRET), BODY)).toBe("Push Hook");
    expect(canonicalEventType("gitlab", [["X-Gitlab-Event", "Merge Request Hook"]], BODY)).toBe("Merge Request Hook");
    expect(canonicalEventType("gitlab", [], BODY)).toBe("");
  });

  it("signs by sending the token, which verify accepts", () => {
    const signed = signHeaders({ provider: "gitlab", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["X-Gitlab-Token", SECRET]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
