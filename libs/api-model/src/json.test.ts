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
