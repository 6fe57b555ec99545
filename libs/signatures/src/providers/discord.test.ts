import { generateKeyPairSync, sign as edSign } from "node:crypto";
import { verifyKey } from "discord-interactions";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

/** A test application's key pair, as hex the way the Developer Portal and tweetnacl write keys. */
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicHex = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("hex");
  const seedHex = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32).toString("hex");
  return { publicKey, privateKey, publicHex, seedHex, pem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };
}

const APP = keyPair();
const OTHER = keyPair();
const PAYLOAD = '{"application_id":"1234567890","id":"987654321","token":"aW50ZXJhY3Rpb24","type":2,"version":1,"data":{"name":"ping","type":1}}';
const BODY = Buffer.from(PAYLOAD);

const verify = verifierFor("discord", APP.publicHex, BODY);

/** The headers Discord sends: the Ed25519 signature of timestamp + body, made here with node:crypto. */
function discordHeaders(timestamp = String(NOW_S), privateKey = APP.privateKey, body: string = PAYLOAD): HeaderPair[] {
  return [
    ["X-Signature-Ed25519", edSign(null, Buffer.from(timestamp + body), privateKey).toString("hex")],
    ["X-Signature-Timestamp", timestamp],
  ];
}

const valueOf = (headers: HeaderPair[], name: string) => headers.find(([n]) => n === name)![1];

describe("discord verification", () => {
  it("accepts what discord-interactions' verifyKey accepts", async () => {
    const headers = discordHeaders();
    expect(await verifyKey(PAYLOAD, valueOf(headers, "X-Signature-Ed25519"), String(NOW_S), APP.publicHex)).toBe(true);
    expect(verify(headers)).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    // The portal shows lower-case hex; a pasted key in capitals or with a newline is the same key.
    expect(verdict(verify(headers, { secret: Buffer.from(`${APP.publicHex.toUpperCase()}\n`) }))).toBe("verified");
  });

  it("rejects another application's key, a changed body and a changed timestamp, as verifyKey does", async () => {
    const headers = discordHeaders();
    const signature = valueOf(headers, "X-Signature-Ed25519");
    expect(await verifyKey(PAYLOAD, signature, String(NOW_S), OTHER.publicHex)).toBe(false);
    expect(verdict(verify(headers, { secret: Buffer.from(OTHER.publicHex) }))).toBe("signature_mismatch");
    expect(verdict(verify(headers, { body: Buffer.from(PAYLOAD + " ") }))).toBe("signature_mismatch");
    expect(await verifyKey(PAYLOAD, signature, String(NOW_S + 1), APP.publicHex)).toBe(false);
    expect(verdict(verify([["X-Signature-Ed25519", signature], ["X-Signature-Timestamp", String(NOW_S + 1)]]))).toBe("signature_mismatch");
  });

  it("cannot verify with a secret that is not a public key", () => {
    expect(verdict(verify(discordHeaders(), { secret: Buffer.from("not-a-key") }))).toBe("signature_mismatch");
    expect(verdict(verify(discordHeaders(), { secret: Buffer.from(APP.seedHex) }))).toBe("signature_mismatch");
  });

  it("judges no timestamp age: Discord documents no window", () => {
    expect(verdict(verify(discordHeaders(String(NOW_S - 86_400 * 30))))).toBe("verified");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Signature-Timestamp", String(NOW_S)]]))).toBe("missing_signature");
  });

  it.each([
    ["no timestamp header", [["X-Signature-Ed25519", "ab".repeat(64)]]],
    ["an empty timestamp", [["X-Signature-Ed25519", "ab".repeat(64)], ["X-Signature-Timestamp", ""]]],
    ["a signature that is not hex", [["X-Signature-Ed25519", "zz".repeat(64)], ["X-Signature-Timestamp", "1"]]],
    ["a short signature", [["X-Signature-Ed25519", "ab".repeat(32)], ["X-Signature-Timestamp", "1"]]],
  ] as [string, HeaderPair[]][])("reports a malformed signature (%s)", (_, headers) => {
    expect(verdict(verify(headers))).toBe("malformed_signature");
  });
});

describe("discord re-signing", () => {
  it.each([
    ["a PKCS#8 PEM", APP.pem],
    ["the hex seed", APP.seedHex],
    ["tweetnacl's hex seed and public key", APP.seedHex + APP.publicHex],
  ])("signs with the target app's private key given as %s, and verifyKey accepts it", async (_, secret) => {
    const headers = signHeaders({ provider: "discord", secret: Buffer.from(secret), body: BODY, nowMs: NOW_MS + 999, headers: [] });
    expect(valueOf(headers, "X-Signature-Timestamp")).toBe(String(NOW_S));
    expect(await verifyKey(PAYLOAD, valueOf(headers, "X-Signature-Ed25519"), String(NOW_S), APP.publicHex)).toBe(true);
    expect(verdict(verify(headers))).toBe("verified");
  });

  it("writes nothing when the secret is no Ed25519 private key", () => {
    expect(signHeaders({ provider: "discord", secret: Buffer.from("whsec_not-a-key"), body: BODY, nowMs: NOW_MS, headers: [] })).toEqual([]);
    expect(signHeaders({ provider: "discord", secret: Buffer.from(OTHER_RSA_PEM), body: BODY, nowMs: NOW_MS, headers: [] })).toEqual([]);
  });
});

const OTHER_RSA_PEM = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString();

describe("discord detection and event type", () => {
  it("is detected by X-Signature-Ed25519", () => {
    expect(detectProvider(discordHeaders())).toBe("discord");
  });

  it("names an interaction by its type, a webhook event by event.type", () => {
    expect(canonicalEventType("discord", [], BODY)).toBe("APPLICATION_COMMAND");
    expect(canonicalEventType("discord", [], Buffer.from('{"type":1,"application_id":"1","token":"t","version":1}'))).toBe("PING");
    const event = '{"version":1,"application_id":"1","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2026-05-01T12:00:00.000000+00:00","data":{}}}';
    expect(canonicalEventType("discord", [], Buffer.from(event))).toBe("APPLICATION_AUTHORIZED");
    expect(canonicalEventType("discord", [], Buffer.from('{"type":99}'))).toBe("");
  });
});
