import { describe, expect, it } from "vitest";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { randomBytes } from "node:crypto";
import type { NewEvent } from "@whc/catalog-core";
import { decodeAppend, decodeObservations, encodeAppend, encodeObservations, type EncodedAppend } from "./append-codec.js";
import { createSharedBytes } from "./shared-bytes.js";

const key = new Uint8Array(randomBytes(60));

/** Every field set (Required: a field added to NewEvent must be added here, and to the codec). */
function full(n: number): Required<NewEvent> {
  return {
    accountId: `acc_${n}`,
    endpointId: `end_${n}`,
    method: "POST",
    path: "/legacy?q=1",
    headers: [["X-Legacy", `v${n}`]],
    sealedRequest: { ciphertext: new Uint8Array(randomBytes(40 + n)), wrappedKey: key, keyId: "k1" },
    remoteIp: "203.0.113.7",
    canonicalEventType: "invoice.paid",
    provider: "stripe",
    verification: "failed",
    verificationFailureReason: "signature_mismatch",
    responseCode: 202,
    truncated: true,
    originalSizeBytes: 123_456 + n,
    body: { ciphertext: new Uint8Array(randomBytes(1500 + n)), wrappedKey: key, keyId: "k1" },
    searchTokens: new Uint8Array(randomBytes(8 * (n + 1))),
    diagnosticJson: `{"n":${n},"ü":"\\u0000"}`,
    forwardedResponseJson: '{"status":200}',
    sequenceStatuses: [200, 500],
    forward: { scheduled: true, deliveries: [{ destinationId: "d1", target: "whc-sealed:abc" }] },
    redactionsJson: '{"headers":1}',
    dedupe: { keyHash: new Uint8Array(randomBytes(32)), windowMs: 60_000 },
  };
}

/** Metadata only: no body, no sealed request, no tokens, nothing optional. */
const bare: NewEvent = {
  accountId: "acc_m",
  endpointId: "end_m",
  method: "GET",
  path: "",
  headers: [],
  remoteIp: "::1",
  canonicalEventType: "",
  provider: "generic",
  verification: "unverified",
  verificationFailureReason: "",
  responseCode: 413,
  truncated: false,
  originalSizeBytes: 99_999_999,
  searchTokens: new Uint8Array(0),
  diagnosticJson: "",
  forwardedResponseJson: "",
};

/** Across a real message port, cloned, as the store's thread gets it. */
function across(encoded: EncodedAppend): EncodedAppend {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(encoded);
  const received = receiveMessageOnPort(port2)?.message as EncodedAppend;
  port1.close();
  return received;
}

const plain = (e: NewEvent) => JSON.parse(JSON.stringify(e, (_, v: unknown) => (v instanceof Uint8Array ? [...v] : v))) as unknown;

describe("the append's encoding for the store's thread", () => {
  it("gives back every field of every event, bytes included, in order", () => {
    const events = [full(0), bare, full(1), full(2)];
    const expected = events.map(plain);
    const encoded = encodeAppend(events, [10, 11, 12.5, 13]);
    const { events: decoded, times } = decodeAppend(across(encoded));
    expect(decoded.map(plain)).toEqual(expected);
    expect(times).toEqual([10, 11, 12.5, 13]);
    // Absent parts stay absent.
    expect(decoded[1]?.body).toBeUndefined();
    expect(decoded[1]?.sealedRequest).toBeUndefined();
    expect(decoded[1]?.dedupe).toBeUndefined();
    expect(Object.keys(decoded[0] ?? {}).sort()).toEqual(Object.keys(full(0)).sort());
  });

  it("carries every part in one buffer, and leaves the caller's events whole", () => {
    const events = [full(3), full(4)];
    const before = events.map(plain);
    const encoded = encodeAppend(events, [1, 2]);
    expect(encoded.bytes.byteLength).toBe(events.reduce((n, e) => n + e.body.ciphertext.length + e.sealedRequest.ciphertext.length + e.searchTokens.length, 0));
    const { events: decoded } = decodeAppend(across(encoded));
    expect(events.map(plain)).toEqual(before);
    // One buffer under every part on the other side.
    const buffers = new Set(decoded.flatMap((e) => [e.body?.ciphertext.buffer, e.sealedRequest?.ciphertext.buffer, e.searchTokens.buffer]));
    expect(buffers.size).toBe(1);
    expect(decoded[1]?.searchTokens).toEqual(events[1]?.searchTokens);
  });

  it("keeps any text as it is, and sends a string or a key shared by events once", () => {
    const odd = { ...bare, canonicalEventType: "a\u0000b", verificationFailureReason: "é ✓ 😀", path: "", diagnosticJson: "" };
    const events = [full(5), odd, full(6)];
    const encoded = encodeAppend(events, [1, 2, 3]);
    expect(encoded.keys).toHaveLength(1);
    expect(encoded.strings.filter((s) => s === "POST")).toHaveLength(1);
    expect(Object.keys(encoded.rare)).toEqual(["0", "2"]);
    const { events: decoded } = decodeAppend(across(encoded));
    expect(decoded[1]?.canonicalEventType).toBe("a\u0000b");
    expect(decoded[1]?.verificationFailureReason).toBe("é ✓ 😀");
    expect(decoded.map(plain)).toEqual(events.map(plain));
    expect(decoded[0]?.body?.wrappedKey).toEqual(key);
  });

  it("writes the bytes into lent shared memory, which the message shares instead of copying", () => {
    const shared = createSharedBytes();
    const events = [full(7), bare, full(8)];
    let lent: ReturnType<typeof shared.lend> | undefined;
    const encoded = encodeAppend(events, [1, 2, 3], (length) => (lent = shared.lend(length)).bytes);
    const { events: decoded } = decodeAppend(across(encoded));
    expect(decoded.map(plain)).toEqual(events.map(plain));
    const body = decoded[2]?.body?.ciphertext as Uint8Array;
    expect(body.buffer).toBeInstanceOf(SharedArrayBuffer);
    // The same memory on both sides: what the sender writes there, the receiver sees.
    encoded.bytes[encoded.bytes.length - 1] = 0xff - (encoded.bytes.at(-1) ?? 0);
    expect(decoded[2]?.searchTokens.at(-1)).toBe(encoded.bytes.at(-1));
    lent?.giveBack();
    // Given back, the memory is lent again; a batch over 1 MiB gets memory of its own.
    expect(shared.lend(10).bytes.buffer).toBe(encoded.bytes.buffer);
    expect(shared.lend(2 * 1024 * 1024).bytes.buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("gives back schema observations as they were, a shared shape's text sent once", () => {
    const shape = '{"v":1}\nS:type\nN:amount';
    const observations = [
      { accountId: "a1", endpointId: "e1", eventType: "invoice.paid", eventId: "ev1", receivedAt: 1_764_000_000_001, shape },
      { accountId: "a1", endpointId: "e1", eventType: "*", eventId: "ev2", receivedAt: 1_764_000_000_002.5, shape },
      { accountId: "a2", endpointId: "e9", eventType: "é\u0000", eventId: "ev3", receivedAt: 3, shape: "other" },
    ];
    const { port1, port2 } = new MessageChannel();
    const encoded = encodeObservations(observations);
    expect(encoded.strings.filter((s) => s === shape)).toHaveLength(1);
    port1.postMessage(encoded);
    const received = receiveMessageOnPort(port2)?.message as ReturnType<typeof encodeObservations>;
    port1.close();
    expect(decodeObservations(received)).toEqual(observations);
    expect(decodeObservations(encodeObservations([]))).toEqual([]);
  });

  it("sends an empty sequence and empty redactions as absent, which mean the same to the store", () => {
    const plainCapture: NewEvent = { ...bare, sequenceStatuses: [], redactionsJson: "" };
    const encoded = encodeAppend([plainCapture, full(9)], [1, 2]);
    expect(Object.keys(encoded.rare)).toEqual(["1"]);
    const { events: decoded } = decodeAppend(across(encoded));
    expect(decoded[0]?.sequenceStatuses).toBeUndefined();
    expect(decoded[0]?.redactionsJson).toBeUndefined();
    expect(decoded[1]?.sequenceStatuses).toEqual([200, 500]);
  });

  it("encodes an empty batch", () => {
    expect(decodeAppend(across(encodeAppend([], [])))).toEqual({ events: [], times: [] });
  });
});
