import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppendedEventSchema, AppendedEventsSchema, type AppendedEvent } from "./index.js";
import { AppendedEventsFormatError, decodeAppendedEvents, encodeAppendedEvents, type AppendedEventValues } from "./appended-events.js";

// The hand-written codec must be indistinguishable from protobuf-es on this message: the same
// bytes out, the same events back from any encoding protobuf allows.

const text = fc.oneof(fc.constant(""), fc.uuid(), fc.string({ unit: "grapheme", maxLength: 40 })).filter((s) => !s.startsWith("\uFEFF"));
const appended: fc.Arbitrary<AppendedEventValues | undefined> = fc.option(
  fc.record(
    {
      id: text,
      receivedAt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 42 }), fc.maxSafeNat()),
      responseCode: fc.oneof(fc.constant(0), fc.constantFrom(200, 202, 503), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
      sequenceIndex: fc.option(fc.oneof(fc.nat(), fc.maxSafeNat()), { nil: undefined }),
      duplicateOf: fc.option(text, { nil: undefined }),
    },
    { requiredKeys: ["id", "receivedAt", "responseCode"] },
  ),
  { nil: undefined },
);
const answer = fc.array(appended, { maxLength: 6 });

/** What protobuf-es makes of the same events (catalog-core's appendedToProto). */
const asMessage = (e: AppendedEventValues | undefined): AppendedEvent =>
  create(
    AppendedEventSchema,
    e
      ? { id: e.id, receivedAtMs: BigInt(e.receivedAt), responseCode: e.responseCode, sequenceIndex: BigInt(e.sequenceIndex ?? 0), duplicateOf: e.duplicateOf ?? "" }
      : { endpointMissing: true },
  );

const plain = (m: AppendedEvent) => ({
  id: m.id,
  receivedAtMs: Number(m.receivedAtMs),
  endpointMissing: m.endpointMissing,
  sequenceIndex: Number(m.sequenceIndex),
  responseCode: m.responseCode,
  duplicateOf: m.duplicateOf,
});

describe("encoded events (AppendEventsResponse.encoded_events)", () => {
  it("knows every field of AppendedEvent: a field added to the message must be added to the codec", () => {
    expect(AppendedEventSchema.fields.map((f) => [f.number, f.localName])).toEqual([
      [1, "id"],
      [2, "receivedAtMs"],
      [3, "endpointMissing"],
      [4, "sequenceIndex"],
      [5, "responseCode"],
      [80, "duplicateOf"],
    ]);
  });

  it("writes the bytes protobuf-es writes, and reads them back to the same events", () => {
    fc.assert(
      fc.property(answer, (events) => {
        const ours = encodeAppendedEvents(events);
        const messages = events.map(asMessage);
        const theirs = toBinary(AppendedEventsSchema, create(AppendedEventsSchema, { events: messages }));
        expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
        expect(decodeAppendedEvents(ours)).toEqual(messages.map(plain));
      }),
      { numRuns: 300 },
    );
  });

  it("reads what protobuf-es writes, in any field order, with unknown fields and repeats", () => {
    const field = fc.oneof(
      fc.record({ no: fc.constant(1), value: text }),
      fc.record({ no: fc.constant(2), value: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) }),
      fc.record({ no: fc.constant(3), value: fc.boolean() }),
      fc.record({ no: fc.constant(4), value: fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }) }),
      fc.record({ no: fc.constant(5), value: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) }),
      fc.record({ no: fc.constant(80), value: text }),
      fc.record({ no: fc.constantFrom(6, 79, 81, 500), value: fc.string({ maxLength: 8 }) }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(field, { maxLength: 8 }), { maxLength: 4 }), (events) => {
        const w = new BinaryWriter();
        for (const fields of events) {
          w.tag(1, WireType.LengthDelimited).fork();
          for (const { no, value } of fields) {
            if (typeof value === "string") w.tag(no, WireType.LengthDelimited).string(value);
            else if (typeof value === "boolean") w.tag(no, WireType.Varint).bool(value);
            else if (typeof value === "bigint") w.tag(no, WireType.Varint).int64(value);
            else w.tag(no, WireType.Varint).int32(value);
          }
          w.join();
        }
        const wire = w.finish();
        expect(decodeAppendedEvents(wire)).toEqual(fromBinary(AppendedEventsSchema, wire).events.map(plain));
      }),
      { numRuns: 500 },
    );
  });

  it("refuses cut-off or garbled bytes with its own error, never another", () => {
    const whole = encodeAppendedEvents([{ id: "01a20000-0000-7000-8000-0000000000aa", receivedAt: 1_790_000_000_000, responseCode: 202, sequenceIndex: 3, duplicateOf: "x" }]);
    for (let n = 1; n < whole.length; n += 1) {
      expect(() => decodeAppendedEvents(whole.subarray(0, n)), `cut at ${n}`).toThrow(AppendedEventsFormatError);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (garbage) => {
        try {
          decodeAppendedEvents(garbage);
        } catch (err) {
          expect(err).toBeInstanceOf(AppendedEventsFormatError);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("refuses to write a time or a position that protobuf would not read back as written", () => {
    expect(() => encodeAppendedEvents([{ id: "a", receivedAt: -1, responseCode: 200 }])).toThrow(RangeError);
    expect(() => encodeAppendedEvents([{ id: "a", receivedAt: 1, responseCode: 200, sequenceIndex: 0.5 }])).toThrow(RangeError);
  });
});
