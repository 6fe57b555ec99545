import { generateKeyPairSync, sign as ecSign } from "node:crypto";
import { EventWebhook } from "@sendgrid/eventwebhook";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SIGNATURE = "X-Twilio-Email-Event-Webhook-Signature";
const TIMESTAMP = "X-Twilio-Email-Event-Webhook-Timestamp";

/** A key pair as SendGrid hands out: P-256, the public half shown as base64 of its SPKI DER. */
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    privateKey,
    publicBase64: publicKey.export({ format: "der", type: "spki" }).toString("base64"),
    pem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    sec1: privateKey.export({ format: "pem", type: "sec1" }).toString(),
    pkcs8Base64: privateKey.export({ format: "der", type: "pkcs8" }).toString("base64"),
  };
}

const SENDGRID = keyPair();
const OTHER = keyPair();
const PAYLOAD =
  '[{"email":"example@test.com","timestamp":1513299569,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"processed","category":"cat facts","sg_event_id":"rbtnWrG1DVDGGGFHFyun0A==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},{"email":"example@test.com","event":"delivered"}]\r\n';
const BODY = Buffer.from(PAYLOAD);
const eventWebhook = new EventWebhook();

const verify = verifierFor("sendgrid", SENDGRID.publicBase64, BODY);

/** The headers SendGrid sends: ECDSA over timestamp + body, signed here with node:crypto. */
function sendgridHeaders(timestamp = String(NOW_S), privateKey = SENDGRID.privateKey): HeaderPair[] {
  return [
    [SIGNATURE, ecSign("sha256", Buffer.from(timestamp + PAYLOAD), privateKey).toString("base64")],
    [TIMESTAMP, timestamp],
  ];
}

const valueOf = (headers: HeaderPair[], name: string) => headers.find(([n]) => n === name)![1];

/** @sendgrid/eventwebhook's verifySignature, with the key as SendGrid's settings show it. */
const sendgridAccepts = (headers: HeaderPair[], publicBase64 = SENDGRID.publicBase64) =>
  eventWebhook.verifySignature(eventWebhook.convertPublicKeyToECDSA(publicBase64), PAYLOAD, valueOf(headers, SIGNATURE), valueOf(headers, TIMESTAMP));

describe("sendgrid verification", () => {
  it("accepts what @sendgrid/eventwebhook accepts", () => {
    const headers = sendgridHeaders();
    expect(sendgridAccepts(headers)).toBe(true);
    expect(verify(headers)).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    // A private key PEM holds its public half, so the key pair's owner may paste either.
    expect(verdict(verify(headers, { secret: Buffer.from(SENDGRID.pem) }))).toBe("verified");
  });

  it("reads the key as a PEM too", () => {
    const pem = `-----BEGIN PUBLIC KEY-----\n${SENDGRID.publicBase64}\n-----END PUBLIC KEY-----\n`;
    expect(verdict(verify(sendgridHeaders(), { secret: Buffer.from(pem) }))).toBe("verified");
  });

  it("rejects another key, a changed body and a changed timestamp, as the library does", () => {
    const headers = sendgridHeaders();
    expect(sendgridAccepts(headers, OTHER.publicBase64)).toBe(false);
    expect(verdict(verify(headers, { secret: Buffer.from(OTHER.publicBase64) }))).toBe("signature_mismatch");
    expect(verdict(verify(headers, { body: Buffer.from(PAYLOAD.trimEnd()) }))).toBe("signature_mismatch");
    const moved: HeaderPair[] = [[SIGNATURE, valueOf(headers, SIGNATURE)], [TIMESTAMP, String(NOW_S + 1)]];
    expect(sendgridAccepts(moved)).toBe(false);
    expect(verdict(verify(moved))).toBe("signature_mismatch");
  });

  it("cannot verify with a secret that is not a P-256 public key", () => {
    expect(verdict(verify(sendgridHeaders(), { secret: Buffer.from("SG.an-api-key") }))).toBe("signature_mismatch");
    const ed25519 = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).toString("base64");
    expect(verdict(verify(sendgridHeaders(), { secret: Buffer.from(ed25519) }))).toBe("signature_mismatch");
  });

  it("judges no timestamp age: SendGrid documents no window", () => {
    expect(verdict(verify(sendgridHeaders(String(NOW_S - 86_400))))).toBe("verified");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([[TIMESTAMP, String(NOW_S)]]))).toBe("missing_signature");
  });

  it.each([
    ["no timestamp header", [[SIGNATURE, "MEUCIQ=="]]],
    ["a signature that is not base64", [[SIGNATURE, "not base64!"], [TIMESTAMP, "1"]]],
  ] as [string, HeaderPair[]][])("reports a malformed signature (%s)", (_, headers) => {
    expect(verdict(verify(headers))).toBe("malformed_signature");
  });

  it("treats base64 that is no DER signature as a mismatch", () => {
    expect(verdict(verify([[SIGNATURE, "AAAA"], [TIMESTAMP, String(NOW_S)]]))).toBe("signature_mismatch");
  });
});

describe("sendgrid re-signing", () => {
  it.each([
    ["a PKCS#8 PEM", SENDGRID.pem],
    ["a SEC1 PEM", SENDGRID.sec1],
    ["base64 PKCS#8 DER", SENDGRID.pkcs8Base64],
  ])("signs with the target's private key given as %s, and the library accepts it", (_, secret) => {
    const headers = signHeaders({ provider: "sendgrid", secret: Buffer.from(secret), body: BODY, nowMs: NOW_MS + 999, headers: [] });
    expect(valueOf(headers, TIMESTAMP)).toBe(String(NOW_S));
    expect(sendgridAccepts(headers)).toBe(true);
    expect(verdict(verify(headers))).toBe("verified");
  });

  it("writes nothing when the secret is no P-256 private key", () => {
    expect(signHeaders({ provider: "sendgrid", secret: Buffer.from(SENDGRID.publicBase64), body: BODY, nowMs: NOW_MS, headers: [] })).toEqual([]);
    expect(signHeaders({ provider: "sendgrid", secret: Buffer.from("whsec_abc"), body: BODY, nowMs: NOW_MS, headers: [] })).toEqual([]);
  });
});

describe("sendgrid detection and event type", () => {
  it("is detected by its signature header, never as twilio", () => {
    expect(detectProvider(sendgridHeaders())).toBe("sendgrid");
  });

  it("names the batch by its first event", () => {
    expect(canonicalEventType("sendgrid", [], BODY)).toBe("processed");
    expect(canonicalEventType("sendgrid", [], Buffer.from(' \n[ {"event":"bounce"}]'))).toBe("bounce");
    expect(canonicalEventType("sendgrid", [], Buffer.from("[]"))).toBe("");
    expect(canonicalEventType("sendgrid", [], Buffer.from("[1,2]"))).toBe("");
  });
});
