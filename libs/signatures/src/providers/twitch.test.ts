import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

/**
 * Twitch publishes no verification library on npm; its documentation gives the recipe
 * (https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message):
 * HMAC-SHA256 over message id + timestamp + raw body, written `sha256=<hex>`. The expected
 * headers are built here from that recipe with node:crypto, independently of the scheme.
 */
const SECRET = "s3cRe7-subscription-secret";
const ID = "befa7b53-d79d-478f-86b9-120f112b044e";
const PAYLOAD =
  '{"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","type":"channel.follow","version":"2","status":"enabled","cost":0,"condition":{"broadcaster_user_id":"1337","moderator_user_id":"1337"},"transport":{"method":"webhook","callback":"https://example.com/webhooks/callback"},"created_at":"2019-11-16T10:11:12.634234626Z"},"event":{"user_id":"1234","user_login":"cool_user","user_name":"Cool_User","broadcaster_user_id":"1337","broadcaster_user_login":"cooler_user","broadcaster_user_name":"Cooler_User","followed_at":"2020-07-15T18:16:11.17106713Z"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");

/** Twitch writes nanoseconds; NOW_MS with a nanosecond tail. */
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1123456Z");

function twitchHeaders(atMs = NOW_MS, { secret = SECRET, id = ID, timestamp = iso(atMs) } = {}): HeaderPair[] {
  const digest = createHmac("sha256", secret).update(id + timestamp).update(BODY).digest("hex");
  return [
    ["Twitch-Eventsub-Message-Id", id],
    ["Twitch-Eventsub-Message-Retry", "0"],
    ["Twitch-Eventsub-Message-Type", "notification"],
    ["Twitch-Eventsub-Message-Signature", `sha256=${digest}`],
    ["Twitch-Eventsub-Message-Timestamp", timestamp],
    ["Twitch-Eventsub-Subscription-Type", "channel.follow"],
    ["Twitch-Eventsub-Subscription-Version", "2"],
  ];
}

const verify = verifierFor("twitch", SECRET, BODY);

const replace = (headers: HeaderPair[], name: string, value: string | undefined): HeaderPair[] =>
  headers.flatMap(([n, v]) => (n !== name ? [[n, v] as const] : value === undefined ? [] : [[n, value] as const]));

describe("twitch verification", () => {
  it("accepts a signature made by Twitch's documented recipe", () => {
    expect(verify(twitchHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("accepts lower-case header names and timestamps of any precision", () => {
    expect(verdict(verify(twitchHeaders().map(([n, v]) => [n.toLowerCase(), v] as const)))).toBe("verified");
    expect(verdict(verify(twitchHeaders(NOW_MS, { timestamp: new Date(NOW_MS).toISOString().replace(".000", "") })))).toBe("verified");
  });

  it("rejects a wrong secret, a changed body and a changed message id", () => {
    expect(verdict(verify(twitchHeaders(NOW_MS, { secret: "another-secret-value" })))).toBe("signature_mismatch");
    expect(verdict(verify(twitchHeaders(), { body: Buffer.from(PAYLOAD.replace("cool_user", "evil_user")) }))).toBe("signature_mismatch");
    expect(verdict(verify(replace(twitchHeaders(), "Twitch-Eventsub-Message-Id", "another-id")))).toBe("signature_mismatch");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(replace(twitchHeaders(), "Twitch-Eventsub-Message-Signature", undefined)))).toBe("missing_signature");
  });

  it.each<[string, string, string | undefined]>([
    ["no sha256= prefix", "Twitch-Eventsub-Message-Signature", "a".repeat(64)],
    ["non-hex digest", "Twitch-Eventsub-Message-Signature", `sha256=${"z".repeat(64)}`],
    ["short digest", "Twitch-Eventsub-Message-Signature", "sha256=abcd"],
    ["no message id", "Twitch-Eventsub-Message-Id", undefined],
    ["empty message id", "Twitch-Eventsub-Message-Id", ""],
    ["no timestamp", "Twitch-Eventsub-Message-Timestamp", undefined],
    ["Unix-seconds timestamp", "Twitch-Eventsub-Message-Timestamp", String(NOW_MS / 1000)],
    ["impossible date", "Twitch-Eventsub-Message-Timestamp", "2026-13-45T99:00:00Z"],
  ])("reports a malformed header set (%s)", (_, name, value) => {
    expect(verdict(verify(replace(twitchHeaders(), name, value)))).toBe("malformed_signature");
  });

  it("rejects messages 11 minutes old or ahead, and accepts the 10-minute edge", () => {
    expect(verdict(verify(twitchHeaders(NOW_MS - 660_000)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(twitchHeaders(NOW_MS + 660_000)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(twitchHeaders(NOW_MS - 600_000)))).toBe("verified");
    expect(verdict(verify(twitchHeaders(NOW_MS - 660_000), { toleranceS: 900 }))).toBe("verified");
  });

  it("judges the signature before the timestamp", () => {
    expect(verdict(verify(twitchHeaders(NOW_MS - 3_600_000, { secret: "another-secret-value" })))).toBe("signature_mismatch");
  });
});

describe("twitch signing", () => {
  it("keeps the message id and signs the recipe's message, which verifies", () => {
    const signed = signHeaders({ provider: "twitch", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: twitchHeaders(0) });
    const record = Object.fromEntries(signed);
    expect(record["Twitch-Eventsub-Message-Id"]).toBe(ID);
    expect(record["Twitch-Eventsub-Message-Timestamp"]).toBe(new Date(NOW_MS).toISOString());
    const digest = createHmac("sha256", SECRET).update(ID + new Date(NOW_MS).toISOString()).update(BODY).digest("hex");
    expect(record["Twitch-Eventsub-Message-Signature"]).toBe(`sha256=${digest}`);
    expect(verdict(verify(signed))).toBe("verified");
    expect(verdict(verify(signed, { secret: Buffer.from("another-secret-value") }))).toBe("signature_mismatch");
  });

  it("makes a new message id when the original had none", () => {
    const signed = signHeaders({ provider: "twitch", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(Object.fromEntries(signed)["Twitch-Eventsub-Message-Id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(verdict(verify(signed))).toBe("verified");
  });
});

describe("twitch detection and event type", () => {
  it("is detected from its own headers", () => {
    expect(detectProvider(twitchHeaders())).toBe("twitch");
  });

  it("is the subscription type header, else the body's subscription.type", () => {
    expect(canonicalEventType("twitch", twitchHeaders(), BODY)).toBe("channel.follow");
    expect(canonicalEventType("twitch", [], BODY)).toBe("channel.follow");
    expect(canonicalEventType("twitch", [["Twitch-Eventsub-Subscription-Type", "stream.online"]], BODY)).toBe("stream.online");
    expect(canonicalEventType("twitch", [], Buffer.from('{"event":{"type":"x"}}'))).toBe("");
  });
});
