import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CapturedEventSchema, CapturedEventsSchema, type CapturedEvent } from "./index.js";
import { CapturedEventsFormatError, decodeCapturedEvents, encodeCapturedEvents } from "./captured-events.js";

// The hand-written codec must be indistinguishable from protobuf-es on this message: the same
// bytes out, the same message back from any encoding protobuf allows.

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
// A leading U+FEFF is a character like any other to protobuf, and this codec keeps it; protobuf-es's
// fromBinary drops it (its TextDecoder strips a byte order mark). Comparisons with fromBinary use
// `plainText`; everything else also meets one that leads with it.
const plainText = fc.oneof(fc.constant(""), fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme-ascii", maxLength: 400 })).filter((s) => !s.startsWith("\uFEFF"));
const text = fc.oneof(plainText, plainText.map((s) => `\uFEFF${s}`));
const bytes = fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ maxLength: 300 }));

const capture: fc.Arbitrary<CapturedEvent> = fc
  .record({
    accountId: text,
    endpointId: text,
    method: text,
    remoteIp: text,
    canonicalEventType: text,
    provider: text,
    verification: text,
    verificationFailureReason: text,
    responseCode: fc.oneof(fc.constant(0), fc.constant(200), int32),
    truncated: fc.boolean(),
    originalSizeBytes: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 40n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    wrappedKey: bytes,
    keyId: text,
    sealedRequest: bytes,
    body: fc.option(bytes, { nil: undefined }),
    searchTokens: bytes,
    diagnosticJson: text,
    forwardedResponseJson: text,
    sequenceStatuses: fc.array(fc.oneof(fc.constantFrom(200, 404, 503), int32), { maxLength: 6 }),
    forwardTarget: text,
    forwardScheduled: fc.boolean(),
    redactionsJson: text,
    bodyShape: text,
    deliveries: fc.array(fc.record({ destinationId: text, target: text }), { maxLength: 3 }),
    dedupeKey: bytes,
    dedupeWindowMs: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 2592000000n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  })
  .map((fields) => create(CapturedEventSchema, fields));

const batch = fc.array(capture, { maxLength: 5 });

function sameCaptures(a: CapturedEvent[], b: CapturedEvent[]): boolean {
  return a.length === b.length && a.every((c, i) => equals(CapturedEventSchema, c, b[i] as CapturedEvent));
}

describe("encoded captures (AppendEventsRequest.encoded_captures)", () => {
  it("writes the bytes protobuf-es writes, and reads them back to the same captures", () => {
    fc.assert(
      fc.property(batch, (captures) => {
        const ours = encodeCapturedEvents(captures);
        const theirs = toBinary(CapturedEventsSchema, create(CapturedEventsSchema, { captures }));
        expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
        expect(sameCaptures(decodeCapturedEvents(ours), captures)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("reads what protobuf-es writes", () => {
    fc.assert(
      fc.property(batch, (captures) => {
        const theirs = toBinary(CapturedEventsSchema, create(CapturedEventsSchema, { captures }));
        expect(sameCaptures(decodeCapturedEvents(theirs), captures)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("reads any field order, repeats, unknown fields and unpacked statuses as protobuf-es does", () => {
    // A capture written field by field in a shuffled order, some fields twice (the last one
    // wins), sequence_statuses one varint each, and fields this version does not know.
    type Piece = (w: BinaryWriter) => void;
    // Field numbers CapturedEvent does not use: the gap before body_shape (30), the one before
    // dedupe_key (80), and beyond dedupe_window_ms (81).
    const unknownField = fc.oneof(fc.integer({ min: 24, max: 29 }), fc.integer({ min: 31, max: 79 }), fc.integer({ min: 82, max: 5000 }));
    const piece: fc.Arbitrary<Piece> = fc.oneof(
      fc.tuple(fc.integer({ min: 1, max: 8 }), plainText).map(([f, s]): Piece => (w) => w.tag(f, WireType.LengthDelimited).string(s)),
      fc.tuple(fc.constantFrom(13, 17, 18, 20, 22, 30), plainText).map(([f, s]): Piece => (w) => w.tag(f, WireType.LengthDelimited).string(s)),
      int32.map((n): Piece => (w) => w.tag(9, WireType.Varint).int32(n)),
      int32.map((n): Piece => (w) => w.tag(19, WireType.Varint).int32(n)),
      fc.array(int32, { maxLength: 4 }).map((ns): Piece => (w) => {
        w.tag(19, WireType.LengthDelimited).fork();
        for (const n of ns) w.int32(n);
        w.join();
      }),
      fc.boolean().map((b): Piece => (w) => w.tag(10, WireType.Varint).bool(b)),
      fc.boolean().map((b): Piece => (w) => w.tag(21, WireType.Varint).bool(b)),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n): Piece => (w) => w.tag(11, WireType.Varint).int64(n)),
      fc.tuple(fc.constantFrom(12, 14, 15, 16, 80), bytes).map(([f, b]): Piece => (w) => w.tag(f, WireType.LengthDelimited).bytes(b)),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n): Piece => (w) => w.tag(81, WireType.Varint).int64(n)),
      // A delivery, its fields in any order, repeated, or with fields this version does not know.
      fc.array(fc.oneof(fc.tuple(fc.constantFrom(1, 2), plainText), fc.tuple(fc.integer({ min: 3, max: 50 }), plainText)), { maxLength: 4 }).map((fields): Piece => (w) => {
        w.tag(23, WireType.LengthDelimited).fork();
        for (const [f, v] of fields) w.tag(f, WireType.LengthDelimited).string(v);
        w.join();
      }),
      fc.tuple(unknownField, fc.nat()).map(([f, n]): Piece => (w) => w.tag(f, WireType.Varint).uint32(n)),
      fc.tuple(unknownField, bytes).map(([f, b]): Piece => (w) => w.tag(f, WireType.LengthDelimited).bytes(b)),
      unknownField.map((f): Piece => (w) => w.tag(f, WireType.Bit32).fixed32(7)),
      unknownField.map((f): Piece => (w) => w.tag(f, WireType.Bit64).fixed64(7n)),
    );
    fc.assert(
      fc.property(fc.array(fc.array(piece, { maxLength: 12 }), { maxLength: 3 }), fc.boolean(), (captures, outerUnknown) => {
        const w = new BinaryWriter();
        if (outerUnknown) w.tag(2, WireType.Varint).uint32(1);
        for (const pieces of captures) {
          w.tag(1, WireType.LengthDelimited).fork();
          for (const p of pieces) p(w);
          w.join();
        }
        const wire = w.finish();
        expect(sameCaptures(decodeCapturedEvents(wire), fromBinary(CapturedEventsSchema, wire).captures)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps a leading U+FEFF, which protobuf-es's fromBinary drops", () => {
    const wire = encodeCapturedEvents([create(CapturedEventSchema, { accountId: "\uFEFFa", verification: "\uFEFF" })]);
    const [ours] = decodeCapturedEvents(wire);
    expect([ours?.accountId, ours?.verification]).toEqual(["\uFEFFa", "\uFEFF"]);
    const [theirs] = fromBinary(CapturedEventsSchema, wire).captures;
    expect([theirs?.accountId, theirs?.verification]).toEqual(["a", ""]);
  });

  it("refuses cut-off or garbled bytes with its own error, never another", () => {
    const whole = encodeCapturedEvents([
      create(CapturedEventSchema, {
        accountId: "a",
        endpointId: "e",
        body: new Uint8Array(40),
        sequenceStatuses: [200, -1],
        originalSizeBytes: 40n,
        deliveries: [{ destinationId: "d", target: "whc-sealed:x" }],
      }),
    ]);
    for (let n = 1; n < whole.length; n += 1) {
      expect(() => decodeCapturedEvents(whole.subarray(0, n)), `cut at ${n}`).toThrow(CapturedEventsFormatError);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (garbage) => {
        try {
          decodeCapturedEvents(garbage);
        } catch (err) {
          expect(err).toBeInstanceOf(CapturedEventsFormatError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
