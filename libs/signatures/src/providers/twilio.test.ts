import { createHash } from "node:crypto";
import twilioSdk from "twilio";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const AUTH_TOKEN = "12345abcdef67890fedcba0987654321";
const URL = "https://hooks.example.com/h/acme/twilio?tenant=7";
const PARAMS = { MessageSid: "SM0123456789abcdef0123456789abcdef", From: "+14155550100", To: "+14155550199", Body: "Hello, world & all", MessageStatus: "delivered" };
const FORM = Buffer.from(new URLSearchParams(PARAMS).toString());
const FORM_TYPE: HeaderPair = ["Content-Type", "application/x-www-form-urlencoded; charset=utf-8"];

/** X-Twilio-Signature as Twilio's own library computes it. */
const sdkSignature = (url = URL, params: Record<string, string | string[]> = PARAMS, token = AUTH_TOKEN) =>
  twilioSdk.getExpectedTwilioSignature(token, url, params);

const verify = verifierFor("twilio", AUTH_TOKEN, FORM);
/** Verifies a form request carrying this signature, at URL unless `extra` says otherwise. */
const check = (signature: string, extra: Parameters<typeof verify>[1] = {}) => verify([FORM_TYPE, ["X-Twilio-Signature", signature]], { url: URL, ...extra });

describe("twilio verification", () => {
  it("accepts a form request signed by Twilio's library, and agrees with validateRequest", () => {
    const signature = sdkSignature();
    expect(twilioSdk.validateRequest(AUTH_TOKEN, signature, URL, PARAMS)).toBe(true);
    expect(check(signature)).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
  });

  it("signs the URL: another path, query or no URL at all is a mismatch", () => {
    const signature = sdkSignature();
    expect(verdict(check(signature, { url: "https://hooks.example.com/h/acme/twilio" }))).toBe("signature_mismatch");
    expect(verdict(verify([["X-Twilio-Signature", signature]]))).toBe("signature_mismatch");
  });

  it("accepts the URL with or without its default port, as Twilio's library does", () => {
    const withPort = "https://hooks.example.com:443/h/acme/twilio?tenant=7";
    expect(twilioSdk.validateRequest(AUTH_TOKEN, sdkSignature(withPort), URL, PARAMS)).toBe(true);
    expect(verdict(check(sdkSignature(withPort)))).toBe("verified");
    expect(verdict(check(sdkSignature(), { url: withPort }))).toBe("verified");
  });

  it("sorts parameters by name and repeated values, as the library does", () => {
    const body = Buffer.from("b=2&a=1&Media=z&Media=y");
    const signature = sdkSignature(URL, { b: "2", a: "1", Media: ["z", "y"] });
    expect(verdict(check(signature, { body }))).toBe("verified");
  });

  it("verifies a JSON request through bodySHA256, as validateRequestWithBody does", () => {
    const json = '{"type":"com.twilio.messaging.message.delivered","data":{"messageSid":"SM1"}}';
    const url = `${URL}&bodySHA256=${createHash("sha256").update(json).digest("hex")}`;
    const signature = sdkSignature(url, {});
    expect(twilioSdk.validateRequestWithBody(AUTH_TOKEN, signature, url, json)).toBe(true);
    const headers: HeaderPair[] = [["Content-Type", "application/json"], ["X-Twilio-Signature", signature]];
    expect(verdict(verify(headers, { url, body: Buffer.from(json) }))).toBe("verified");
    // The URL is authentic but the body is not the one it hashed.
    expect(verdict(verify(headers, { url, body: Buffer.from(json + " ") }))).toBe("signature_mismatch");
  });

  it("rejects a wrong auth token and a changed parameter", () => {
    expect(verdict(check(sdkSignature(URL, PARAMS, "0".repeat(32))))).toBe("signature_mismatch");
    expect(verdict(check(sdkSignature(), { secret: Buffer.from("0".repeat(32)) }))).toBe("signature_mismatch");
    expect(verdict(check(sdkSignature(), { body: Buffer.from(new URLSearchParams({ ...PARAMS, Body: "changed" }).toString()) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([FORM_TYPE], { url: URL }))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["not base64", "not a signature!"],
    ["a SHA-256 length digest", Buffer.alloc(32).toString("base64")],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(check(value))).toBe("malformed_signature");
  });
});

describe("twilio signing", () => {
  it("writes the header Twilio's library computes, and validateRequest accepts it", () => {
    const signed = signHeaders({ provider: "twilio", secret: Buffer.from(AUTH_TOKEN), body: FORM, nowMs: 0, url: URL, headers: [] });
    expect(signed).toEqual([["X-Twilio-Signature", sdkSignature()]]);
    expect(twilioSdk.validateRequest(AUTH_TOKEN, signed[0]![1], URL, PARAMS)).toBe(true);
    expect(verdict(verify(signed, { url: URL }))).toBe("verified");
  });
});

describe("twilio detection and event type", () => {
  it("is detected by X-Twilio-Signature", () => {
    expect(detectProvider([FORM_TYPE, ["X-Twilio-Signature", sdkSignature()]])).toBe("twilio");
  });

  it("names a form callback by its status or event field, a JSON body by its type", () => {
    expect(canonicalEventType("twilio", [FORM_TYPE], FORM)).toBe("delivered");
    const taskRouter = Buffer.from("EventType=task.created&TaskSid=WT1&CallStatus=ignored");
    expect(canonicalEventType("twilio", [FORM_TYPE], taskRouter)).toBe("task.created");
    expect(canonicalEventType("twilio", [["Content-Type", "application/json"]], Buffer.from('{"type":"com.twilio.voice.status-callback.call.completed"}'))).toBe(
      "com.twilio.voice.status-callback.call.completed",
    );
    expect(canonicalEventType("twilio", [["Content-Type", "text/plain"]], FORM)).toBe("");
  });
});
