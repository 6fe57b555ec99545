import { describe, it, expect } from "vitest";
import { create } from "@bufbuild/protobuf";
import { EventSchema } from "@whc/contracts";
import { bodyJson, eventSummaryJson, headersJson } from "./json.js";

describe("public JSON shapes", () => {
  it("groups repeated headers under their first spelling, in arrival order", () => {
    const h = headersJson([
      { name: "X-B", value: "1" },
      { name: "X-A", value: "2" },
      { name: "X-B", value: "3" },
    ]);
    expect(Object.keys(h)).toEqual(["X-B", "X-A"]);
    expect(h["X-B"]).toEqual(["1", "3"]);
  });

  it("shows header bytes that form UTF-8 decoded, and other bytes one character each", () => {
    // Values arrive one character per byte, as Node's parser hands them over.
    const asSent = (bytes: number[]) => Buffer.from(bytes).toString("latin1");
    const h = headersJson([
      { name: "X-Utf8", value: asSent([0x63, 0x61, 0x66, 0xc3, 0xa9]) },
      { name: "X-Latin1", value: asSent([0x63, 0x61, 0x66, 0xe9]) },
      { name: "X-Emoji", value: asSent([...Buffer.from("ok \u{1F600}")]) },
      { name: "X-Broken", value: asSent([0x61, 0xc3, 0x28]) },
      { name: "X-Ascii", value: "plain" },
    ]);
    expect(h["X-Utf8"]).toEqual(["café"]);
    expect(h["X-Latin1"]).toEqual(["café"]);
    expect(h["X-Emoji"]).toEqual(["ok \u{1F600}"]);
    expect(h["X-Broken"]).toEqual(["a\u00c3("]);
    expect(h["X-Ascii"]).toEqual(["plain"]);
  });

  it("returns UTF-8 text as is (a BOM included) and anything else as base64", () => {
    expect(bodyJson(Buffer.from("\uFEFFhé"))).toEqual({ body: "\uFEFFhé", bodyEncoding: "utf8" });
    const binary = Buffer.from([0xff, 0x00, 0xc3]);
    expect(bodyJson(binary)).toEqual({ body: binary.toString("base64"), bodyEncoding: "base64" });
    expect(bodyJson(new Uint8Array())).toEqual({ body: "", bodyEncoding: "utf8" });
  });

  it("derives decryption from the stored body and the known master keys", () => {
    const stored = create(EventSchema, { id: "e", bodyStored: true, body: { keyId: "k1" }, receivedAtMs: 0n });
    expect(eventSummaryJson(stored).decryption).toBe("ok");
    expect(eventSummaryJson(stored, { knownKeyIds: new Set(["k2"]) }).decryption).toBe("failed");
    const meta = create(EventSchema, { id: "e", bodyStored: false, receivedAtMs: 0n });
    expect(eventSummaryJson(meta).decryption).toBe("metadata_only");
    expect(eventSummaryJson(stored).searchMatchedTruncated).toBeUndefined();
    expect(eventSummaryJson(stored, { search: true }).searchMatchedTruncated).toBe(false);
  });
});
