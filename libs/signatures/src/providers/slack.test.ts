import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders, slackUrlVerificationChallenge, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, verdict, verifierFor, NOW_S } from "../testing/index.js";

const SECRET = "slack-signing-secret";
const BODY = Buffer.from('{"type":"event_callback","event":{"type":"app_mention","text":"hi"}}');

/** Slack's documented algorithm, computed independently of the library. */
function slackHeaders(timestamp: number | string = NOW_S, secret = SECRET, body: Uint8Array = BODY): HeaderPair[] {
  const digest = createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest("hex");
  return [
    ["X-Slack-Request-Timestamp", String(timestamp)],
    ["X-Slack-Signature", `v0=${digest}`],
  ];
}

const verify = verifierFor("slack", SECRET, BODY);

describe("slack verification", () => {
  it("matches Slack's documented example request", () => {
    const body = Buffer.from(
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar" +
        "&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=" +
        "&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN" +
        "&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
    );
    const headers: HeaderPair[] = [
      ["X-Slack-Request-Timestamp", "1531420618"],
      ["X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"],
    ];
    const input = { body, secret: Buffer.from("8f742231b10e8888abcd99yyyzzz85a5"), nowMs: 1_531_420_618_000 };
    expect(verify(headers, input)).toEqual({ verification: "verified", checks: TIMED_PASSED });
    expect(verdict(verify(headers, { ...input, secret: Buffer.from("8f742231b10e8888abcd99yyyzzz85a6") }))).toBe("signature_mismatch");
  });

  it("accepts the documented algorithm", () => {
    expect(verdict(verify(slackHeaders()))).toBe("verified");
  });

  it("matches header names case-insensitively", () => {
    const lower = slackHeaders().map(([n, v]) => [n.toLowerCase(), v] as const);
    const upper = slackHeaders().map(([n, v]) => [n.toUpperCase(), v] as const);
    expect(verdict(verify(lower))).toBe("verified");
    expect(verdict(verify(upper))).toBe("verified");
  });

  it("rejects a wrong secret, a changed body and a changed timestamp", () => {
    expect(verdict(verify(slackHeaders(NOW_S, "other-secret")))).toBe("signature_mismatch");
    expect(verdict(verify(slackHeaders(), { body: Buffer.from('{"type":"event_callback"}') }))).toBe("signature_mismatch");
    const [, signature] = slackHeaders() as [HeaderPair, HeaderPair];
    expect(verdict(verify([["X-Slack-Request-Timestamp", String(NOW_S - 1)], signature]))).toBe("signature_mismatch");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Slack-Request-Timestamp", String(NOW_S)]]))).toBe("missing_signature");
  });

  it.each<[string, HeaderPair[]]>([
    ["no timestamp header", [["X-Slack-Signature", `v0=${"a".repeat(64)}`]]],
    ["non-numeric timestamp", [["X-Slack-Request-Timestamp", "yesterday"], ["X-Slack-Signature", `v0=${"a".repeat(64)}`]]],
    ["unknown version", [["X-Slack-Request-Timestamp", String(NOW_S)], ["X-Slack-Signature", `v1=${"a".repeat(64)}`]]],
    ["non-hex", [["X-Slack-Request-Timestamp", String(NOW_S)], ["X-Slack-Signature", "v0=nothex"]]],
    ["empty", [["X-Slack-Request-Timestamp", String(NOW_S)], ["X-Slack-Signature", ""]]],
  ])("reports a malformed signature (%s)", (_, headers) => {
    expect(verify(headers)).toEqual({
      verification: "failed",
      reason: "malformed_signature",
      checks: [
        { name: "header_present", ok: true },
        { name: "header_well_formed", ok: false },
      ],
    });
  });

  it("rejects timestamps 6 minutes old or 6 minutes ahead, and accepts the 5-minute edge", () => {
    expect(verdict(verify(slackHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(slackHeaders(NOW_S + 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(slackHeaders(NOW_S - 300)))).toBe("verified");
    expect(verdict(verify(slackHeaders(NOW_S + 300)))).toBe("verified");
  });

  it("signs over the timestamp exactly as sent", () => {
    expect(verdict(verify(slackHeaders(`0${NOW_S}`)))).toBe("verified");
  });

  it("uses the first value when a header repeats", () => {
    const [timestamp, signature] = slackHeaders() as [HeaderPair, HeaderPair];
    expect(verdict(verify([timestamp, ["X-Slack-Request-Timestamp", "1"], signature, ["X-Slack-Signature", "v0=00"]]))).toBe("verified");
    expect(verdict(verify([["X-Slack-Request-Timestamp", String(NOW_S - 5)], timestamp, signature]))).toBe("signature_mismatch");
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x00]);
    expect(verdict(verify(slackHeaders(NOW_S, SECRET, body), { body }))).toBe("verified");
    expect(verdict(verify(slackHeaders(NOW_S, SECRET, body), { body: body.subarray(1) }))).toBe("signature_mismatch");
  });
});

describe("slack signing", () => {
  it("sets the timestamp and the documented signature, which our verifier accepts", () => {
    const signed = signHeaders({ provider: "slack", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS + 500, headers: [] });
    expect(signed).toEqual(slackHeaders(NOW_S));
    expect(verdict(verify(signed))).toBe("verified");
    expect(verdict(verify(signed, { secret: Buffer.from("other") }))).toBe("signature_mismatch");
  });

  it("round-trips a binary body", () => {
    const body = Buffer.from([0xc3, 0x00, 0x28]);
    const signed = signHeaders({ provider: "slack", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
  });
});

describe("slack event type", () => {
  const type = (body: string, headers: HeaderPair[] = []) => canonicalEventType("slack", headers, Buffer.from(body));
  const form = (payload: unknown) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const FORM: HeaderPair = ["Content-Type", "application/x-www-form-urlencoded; charset=utf-8"];

  it("is the inner event's type, else the top-level type", () => {
    expect(type('{"type":"event_callback","event":{"type":"app_mention"}}')).toBe("app_mention");
    expect(type('{"type":"event_callback","event":{"text":"no type"}}')).toBe("event_callback");
    expect(type('{"type":"url_verification","challenge":"c"}')).toBe("url_verification");
    expect(type('{"event":"not an object","type":"app_rate_limited"}')).toBe("app_rate_limited");
  });

  it("is the type inside a form's payload field", () => {
    expect(type(form({ type: "block_actions", actions: [] }), [FORM])).toBe("block_actions");
    expect(type(form({ type: "view_submission" }))).toBe("view_submission");
    expect(type(form({ type: "shortcut" }), [["Content-Type", "text/plain"]])).toBe("");
  });

  it("is empty for slash commands, bad payloads and binary bodies", () => {
    expect(type("command=%2Fweather&text=paris", [FORM])).toBe("");
    expect(type("payload=%7Bnot%20json", [FORM])).toBe("");
    expect(type("payload=%5B1%2C2%5D", [FORM])).toBe("");
    expect(canonicalEventType("slack", [FORM], Buffer.from([0x70, 0x3d, 0xff, 0x00]))).toBe("");
  });
});

describe("slackUrlVerificationChallenge", () => {
  const challenge = (body: string | Uint8Array) => slackUrlVerificationChallenge(typeof body === "string" ? Buffer.from(body) : body);

  it("returns the challenge of a url_verification request", () => {
    expect(challenge('{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}')).toBe(
      "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    );
  });

  it("returns undefined for anything else", () => {
    expect(challenge('{"type":"event_callback","challenge":"x"}')).toBeUndefined();
    expect(challenge('{"type":"url_verification"}')).toBeUndefined();
    expect(challenge('{"type":"url_verification","challenge":42}')).toBeUndefined();
    expect(challenge('["url_verification"]')).toBeUndefined();
    expect(challenge("type=url_verification&challenge=x")).toBeUndefined();
    expect(challenge(Buffer.from([0xff, 0xfe, 0x00]))).toBeUndefined();
    expect(challenge("")).toBeUndefined();
  });
});
