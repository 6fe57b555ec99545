import { createHmac, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders, standardWebhooksKey, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, verdict, verifierFor, NOW_S } from "../testing/index.js";

const KEY = randomBytes(32);
const SECRET = `whsec_${KEY.toString("base64")}`;
const PAYLOAD = '{"type":"invoice.paid","data":{"id":"in_1","note":"ünïcode"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");
const library = new Webhook(SECRET);

/** Headers whose signature the standardwebhooks library made. */
function libraryHeaders(timestampS = NOW_S, { family = "webhook", id = "msg_2Lh9KRb0pzN4LePd3XiA0fTOzYj", wh = library } = {}): HeaderPair[] {
  return [
    [`${family}-id`, id],
    [`${family}-timestamp`, String(timestampS)],
    [`${family}-signature`, wh.sign(id, new Date(timestampS * 1000), PAYLOAD)],
  ];
}

const verify = verifierFor("standard_webhooks", SECRET, BODY);

const asRecord = (headers: readonly HeaderPair[]) => Object.fromEntries(headers);

describe("standard webhooks verification", () => {
  it("accepts a signature made by the standardwebhooks library", () => {
    expect(verify(libraryHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("accepts the svix- header spelling", () => {
    expect(verdict(verify(libraryHeaders(NOW_S, { family: "svix" })))).toBe("verified");
  });

  it("matches the Svix documentation's example", () => {
    const headers: HeaderPair[] = [
      ["svix-id", "msg_p5jXN8AQM9LWM0D4loKWxJek"],
      ["svix-timestamp", "1614265330"],
      ["svix-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="],
    ];
    const input = { body: Buffer.from('{"test": 2432232314}'), secret: Buffer.from("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), nowMs: 1_614_265_330_000 };
    expect(verdict(verify(headers, input))).toBe("verified");
    expect(verdict(verify(headers, { ...input, body: Buffer.from('{"test": 2432232315}') }))).toBe("signature_mismatch");
  });

  it("matches header names case-insensitively", () => {
    const upper = libraryHeaders().map(([n, v]) => [n.toUpperCase(), v] as const);
    const title: HeaderPair[] = libraryHeaders().map(([n, v]) => [n.replace(/\b\w/g, (c) => c.toUpperCase()), v]);
    expect(verdict(verify(upper))).toBe("verified");
    expect(verdict(verify(title))).toBe("verified");
  });

  it("rejects a wrong secret, a changed body and a changed message id", () => {
    expect(verdict(verify(libraryHeaders(), { secret: Buffer.from(`whsec_${randomBytes(32).toString("base64")}`) }))).toBe(
      "signature_mismatch",
    );
    expect(verdict(verify(libraryHeaders(), { body: Buffer.from(PAYLOAD.replace("paid", "void")) }))).toBe("signature_mismatch");
    const [, timestamp, signature] = libraryHeaders() as [HeaderPair, HeaderPair, HeaderPair];
    expect(verdict(verify([["webhook-id", "msg_other"], timestamp, signature]))).toBe("signature_mismatch");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(libraryHeaders().slice(0, 2)))).toBe("missing_signature");
  });

  it.each<[string, (h: HeaderPair[]) => HeaderPair[]]>([
    ["no id", (h) => h.filter(([n]) => n !== "webhook-id")],
    ["empty id", (h) => h.map(([n, v]) => [n, n === "webhook-id" ? "" : v])],
    ["no timestamp", (h) => h.filter(([n]) => n !== "webhook-timestamp")],
    ["non-numeric timestamp", (h) => h.map(([n, v]) => [n, n === "webhook-timestamp" ? "2026-01-01T00:00:00Z" : v])],
    ["only other versions", (h) => h.map(([n, v]) => [n, n === "webhook-signature" ? v.replace("v1,", "v2,") : v])],
    ["v1 without a comma", (h) => h.map(([n, v]) => [n, n === "webhook-signature" ? v.replace("v1,", "v1") : v])],
    ["v1 not base64", (h) => h.map(([n, v]) => [n, n === "webhook-signature" ? "v1,%%%not-base64%%%" : v])],
    ["v1 too short", (h) => h.map(([n, v]) => [n, n === "webhook-signature" ? "v1,AAAA" : v])],
    ["empty signature", (h) => h.map(([n, v]) => [n, n === "webhook-signature" ? "" : v])],
  ])("reports a malformed header set (%s)", (_, change) => {
    expect(verdict(verify(change(libraryHeaders())))).toBe("malformed_signature");
  });

  it("rejects timestamps 6 minutes old or 6 minutes ahead, and accepts the 5-minute edge", () => {
    expect(verdict(verify(libraryHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(libraryHeaders(NOW_S + 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(libraryHeaders(NOW_S - 300)))).toBe("verified");
    expect(verdict(verify(libraryHeaders(NOW_S + 300)))).toBe("verified");
  });

  it("accepts any v1 in a list of signatures, skipping other versions", () => {
    const [id, timestamp, signature] = libraryHeaders() as [HeaderPair, HeaderPair, HeaderPair];
    const wrong = new Webhook(randomBytes(32), { format: "raw" }).sign(id[1], new Date(NOW_MS), PAYLOAD);
    const asymmetric = `v1a,${randomBytes(64).toString("base64")}`;
    expect(verdict(verify([id, timestamp, ["webhook-signature", `${asymmetric} ${wrong} ${signature[1]}`]]))).toBe("verified");
    expect(verdict(verify([id, timestamp, ["webhook-signature", `${signature[1]} ${wrong}`]]))).toBe("verified");
    expect(verdict(verify([id, timestamp, ["webhook-signature", `${asymmetric} ${wrong}`]]))).toBe("signature_mismatch");
  });

  it("prefers webhook- headers over svix- ones and uses the first value of a repeated header", () => {
    const webhook = libraryHeaders();
    const staleSvix = libraryHeaders(NOW_S, { family: "svix", wh: new Webhook(randomBytes(32), { format: "raw" }) });
    expect(verdict(verify([...staleSvix, ...webhook]))).toBe("verified");
    const [id, timestamp, signature] = webhook as [HeaderPair, HeaderPair, HeaderPair];
    expect(verdict(verify([id, ["webhook-id", "msg_second"], timestamp, signature]))).toBe("verified");
    expect(verdict(verify([["webhook-id", "msg_first"], id, timestamp, signature]))).toBe("signature_mismatch");
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0xff, 0xfe, 0x00, 0xc3, 0x28]);
    const digest = createHmac("sha256", KEY).update(`msg_bin.${NOW_S}.`).update(body).digest("base64");
    const headers: HeaderPair[] = [
      ["webhook-id", "msg_bin"],
      ["webhook-timestamp", String(NOW_S)],
      ["webhook-signature", `v1,${digest}`],
    ];
    expect(verdict(verify(headers, { body }))).toBe("verified");
    expect(verdict(verify(headers, { body: Buffer.from([0x00, 0xff, 0xfe, 0x00, 0xc3, 0x29]) }))).toBe("signature_mismatch");
  });
});

describe("standard webhooks secrets", () => {
  it("signs with the base64-decoded key of a whsec_ secret", () => {
    expect(Buffer.from(standardWebhooksKey(Buffer.from(SECRET)))).toEqual(KEY);
  });

  it("ignores whitespace pasted around a whsec_ secret", () => {
    expect(verdict(verify(libraryHeaders(), { secret: Buffer.from(` ${SECRET}\n`) }))).toBe("verified");
  });

  it("signs with the raw bytes of any other secret", () => {
    const raw = Buffer.from("plain-text-secret");
    expect(standardWebhooksKey(raw)).toEqual(raw);
    const rawLibrary = new Webhook(raw, { format: "raw" });
    const headers = libraryHeaders(NOW_S, { wh: rawLibrary });
    expect(verdict(verify(headers, { secret: raw }))).toBe("verified");
    // An unprefixed secret is not base64-decoded, even when it happens to be valid base64.
    const base64Looking = Buffer.from(KEY.toString("base64"));
    expect(verdict(verify(libraryHeaders(), { secret: base64Looking }))).toBe("signature_mismatch");
  });

  it("falls back to the raw bytes when what follows whsec_ is not base64", () => {
    const odd = Buffer.from("whsec_not*base64");
    expect(standardWebhooksKey(odd)).toEqual(odd);
  });
});

describe("standard webhooks signing", () => {
  it("round-trips through our verifier and the standardwebhooks library, keeping the message id", () => {
    const nowMs = Date.now();
    const original: HeaderPair[] = [["Webhook-Id", "msg_original"], ["Webhook-Timestamp", "1"], ["Webhook-Signature", "v1,stale"]];
    const signed = signHeaders({ provider: "standard_webhooks", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: original });
    expect(signed.map(([n]) => n)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(asRecord(signed)["webhook-id"]).toBe("msg_original");
    expect(asRecord(signed)["webhook-timestamp"]).toBe(String(Math.floor(nowMs / 1000)));
    expect(verdict(verify(signed, { nowMs }))).toBe("verified");
    expect(library.verify(PAYLOAD, asRecord(signed))).toEqual(JSON.parse(PAYLOAD));
    expect(() => new Webhook(randomBytes(32), { format: "raw" }).verify(PAYLOAD, asRecord(signed))).toThrow("No matching signature found");
  });

  it("keeps the svix- spelling when the original used it", () => {
    const nowMs = Date.now();
    const original: HeaderPair[] = [["svix-id", "msg_svix"], ["svix-timestamp", "1"], ["svix-signature", "v1,stale"]];
    const signed = signHeaders({ provider: "standard_webhooks", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: original });
    expect(signed.map(([n]) => n)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(asRecord(signed)["svix-id"]).toBe("msg_svix");
    expect(verdict(verify(signed, { nowMs }))).toBe("verified");
    const unbranded = Object.fromEntries(signed.map(([n, v]) => [n.replace("svix-", "webhook-"), v]));
    expect(library.verify(PAYLOAD, unbranded)).toEqual(JSON.parse(PAYLOAD));
  });

  it("makes a new msg_ id, with webhook- headers, when the original had none", () => {
    const sign = () => signHeaders({ provider: "standard_webhooks", secret: Buffer.from(SECRET), body: BODY, nowMs: Date.now(), headers: [] });
    const first = asRecord(sign());
    expect(first["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(asRecord(sign())["webhook-id"]).not.toBe(first["webhook-id"]);
    expect(library.verify(PAYLOAD, first)).toEqual(JSON.parse(PAYLOAD));
  });

  it("signs with the raw bytes of a secret without whsec_", () => {
    const raw = Buffer.from("plain-text-secret");
    const signed = signHeaders({ provider: "standard_webhooks", secret: raw, body: BODY, nowMs: Date.now(), headers: [] });
    expect(new Webhook(raw, { format: "raw" }).verify(PAYLOAD, asRecord(signed))).toEqual(JSON.parse(PAYLOAD));
  });

  it("round-trips a binary body through our verifier", () => {
    const body = Buffer.from([0x00, 0xfe, 0xff]);
    const signed = signHeaders({ provider: "standard_webhooks", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
    expect(verdict(verify(signed, { body: Buffer.from([0x00, 0xfe]) }))).toBe("signature_mismatch");
  });
});

describe("standard webhooks event type", () => {
  it("is the body's top-level type", () => {
    expect(canonicalEventType("standard_webhooks", libraryHeaders(), BODY)).toBe("invoice.paid");
    expect(canonicalEventType("standard_webhooks", [], Buffer.from('{"eventType":"x"}'))).toBe("");
  });
});
