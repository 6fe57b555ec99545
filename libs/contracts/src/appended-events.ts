import { int32Size, LEN, lenField, Reader, tag, VARINT, varintSize, Writer } from "./wire.js";

/**
 * The wire form of an AppendedEvents message (AppendEventsResponse.encoded_events): the answer
 * of an append, written by the catalog and read by ingest in one pass each (ADR 0094), where
 * protobuf-es made and visited a message per capture through its reflection API on both sides.
 * Checked against protobuf-es both ways (appended-events.test.ts). Proto3 rules as in
 * captured-events.ts: fields in number order, defaults left out; unknown fields skipped and the
 * last of a repeated singular field kept when reading.
 */

/** An appended event as the catalog answers it; undefined: its endpoint was gone, nothing stored. */
export interface AppendedEventValues {
  id: string;
  /** Milliseconds since the epoch (received_at_ms). */
  receivedAt: number;
  responseCode: number;
  sequenceIndex?: number | undefined;
  duplicateOf?: string | undefined;
}

/** An appended event as ingest reads it, every field at its value or its default. */
export interface DecodedAppendedEvent {
  id: string;
  receivedAtMs: number;
  endpointMissing: boolean;
  sequenceIndex: number;
  responseCode: number;
  duplicateOf: string;
}

const T_EVENT = tag(1, LEN);
const T_ID = tag(1, LEN);
const T_RECEIVED_AT = tag(2, VARINT);
const T_ENDPOINT_MISSING = tag(3, VARINT);
const T_SEQUENCE_INDEX = tag(4, VARINT);
const T_RESPONSE_CODE = tag(5, VARINT);
const T_DUPLICATE_OF = tag(80, LEN);
/** The whole message of an event whose endpoint was missing: endpoint_missing = true. */
const MISSING = [...T_ENDPOINT_MISSING, 1];

/** An int64 field holding a count or a time: a safe integer, never negative. */
function unsigned(n: number | undefined, what: string): number {
  if (n === undefined) return 0;
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative safe integer, not ${n}`);
  return n;
}

/** The AppendedEvents message of these events, encoded. */
export function encodeAppendedEvents(events: readonly (AppendedEventValues | undefined)[]): Buffer {
  // Sizes first: each event's message size, and its two strings' lengths.
  const sizes: number[] = [];
  let total = 0;
  for (const e of events) {
    let size = MISSING.length;
    if (e) {
      const id = Buffer.byteLength(e.id, "utf8");
      const duplicateOf = e.duplicateOf ? Buffer.byteLength(e.duplicateOf, "utf8") : 0;
      const receivedAt = unsigned(e.receivedAt, "receivedAt");
      const sequenceIndex = unsigned(e.sequenceIndex, "sequenceIndex");
      size =
        (id > 0 ? lenField(T_ID.length, id) : 0) +
        (receivedAt > 0 ? T_RECEIVED_AT.length + varintSize(receivedAt) : 0) +
        (sequenceIndex > 0 ? T_SEQUENCE_INDEX.length + varintSize(sequenceIndex) : 0) +
        (e.responseCode !== 0 ? T_RESPONSE_CODE.length + int32Size(e.responseCode) : 0) +
        (duplicateOf > 0 ? lenField(T_DUPLICATE_OF.length, duplicateOf) : 0);
      sizes.push(size, id, duplicateOf);
    } else sizes.push(size, 0, 0);
    total += lenField(T_EVENT.length, size);
  }
  const w = new Writer(Buffer.allocUnsafe(total));
  events.forEach((e, i) => {
    w.raw(T_EVENT);
    w.varint(sizes[3 * i] as number);
    if (!e) return w.raw(MISSING);
    w.string(T_ID, e.id, sizes[3 * i + 1] as number);
    if (e.receivedAt > 0) {
      w.raw(T_RECEIVED_AT);
      w.varint(e.receivedAt);
    }
    if (e.sequenceIndex) {
      w.raw(T_SEQUENCE_INDEX);
      w.varint(e.sequenceIndex);
    }
    if (e.responseCode !== 0) {
      w.raw(T_RESPONSE_CODE);
      w.int32(e.responseCode);
    }
    if (e.duplicateOf) w.string(T_DUPLICATE_OF, e.duplicateOf, sizes[3 * i + 2] as number);
  });
  if (w.at !== total) throw new Error(`encodeAppendedEvents wrote ${w.at} bytes of ${total}`);
  return w.buf;
}

/** Thrown for bytes that are not an AppendedEvents message. */
export class AppendedEventsFormatError extends Error {
  constructor(message: string) {
    super(`encoded_events: ${message}`);
    this.name = "AppendedEventsFormatError";
  }
}

const formatError = (message: string): Error => new AppendedEventsFormatError(message);

function wireTypeOf(t: number, wanted: number): void {
  if ((t & 7) !== wanted) throw new AppendedEventsFormatError(`field ${Math.floor(t / 8)} has wire type ${t & 7}`);
}

/** An int64 as a number (an out-of-range one as its nearest double). */
function int64(r: Reader): number {
  return Number(r.int64());
}

function readEvent(r: Reader): DecodedAppendedEvent {
  const e: DecodedAppendedEvent = { id: "", receivedAtMs: 0, endpointMissing: false, sequenceIndex: 0, responseCode: 0, duplicateOf: "" };
  while (r.at < r.end) {
    const t = r.uint();
    switch (Math.floor(t / 8)) {
      case 1:
        wireTypeOf(t, LEN);
        e.id = r.string();
        break;
      case 2:
        wireTypeOf(t, VARINT);
        e.receivedAtMs = int64(r);
        break;
      case 3:
        wireTypeOf(t, VARINT);
        e.endpointMissing = r.varint() !== 0;
        break;
      case 4:
        wireTypeOf(t, VARINT);
        e.sequenceIndex = int64(r);
        break;
      case 5:
        wireTypeOf(t, VARINT);
        e.responseCode = r.int32();
        break;
      case 80:
        wireTypeOf(t, LEN);
        e.duplicateOf = r.string();
        break;
      case 0:
        throw new AppendedEventsFormatError("field number 0");
      default:
        r.skip(t & 7);
    }
  }
  return e;
}

/** The events of an encoded AppendedEvents message; AppendedEventsFormatError when malformed. */
export function decodeAppendedEvents(bytes: Uint8Array): DecodedAppendedEvent[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(buf, 0, buf.length, formatError);
  const out: DecodedAppendedEvent[] = [];
  while (r.at < r.end) {
    const t = r.uint();
    const field = Math.floor(t / 8);
    if (field === 1) {
      wireTypeOf(t, LEN);
      const [start, end] = r.span();
      out.push(readEvent(new Reader(buf, start, end, formatError)));
    } else if (field === 0) throw new AppendedEventsFormatError("field number 0");
    else r.skip(t & 7);
  }
  return out;
}
