import type { CapturedEvent } from "./gen/webhookcapture/catalog/v1/catalog_pb.js";
import { int32Size, LEN, lenField, Reader, tag, uint64Of, uint64Size, VARINT, Writer } from "./wire.js";

/**
 * The wire form of a CapturedEvents message (AppendEventsRequest.encoded_captures), written
 * and read in one pass over the batch (ADR 0013). protobuf-es reaches every field through its
 * reflection API and a chunked writer: about 10 µs to encode and 4 µs to decode a 1.5 KB
 * capture, once per capture in both ingest and the catalog. These two functions do the same
 * for this one message and are checked against protobuf-es both ways (captured-events.test.ts):
 * whatever either writes, the other reads to the same message.
 *
 * Proto3 rules kept: fields in number order, scalars at their default value left out, the
 * optional `body` written whenever present (even empty), `sequence_statuses` packed; when
 * reading, unknown fields are skipped, a singular field seen twice keeps its last value, and
 * a repeated int32 is accepted packed or not.
 */

const STRING_FIELDS = [
  [1, "accountId"],
  [2, "endpointId"],
  [3, "method"],
  [4, "remoteIp"],
  [5, "canonicalEventType"],
  [6, "provider"],
  [7, "verification"],
  [8, "verificationFailureReason"],
] as const;
const T_STRING = STRING_FIELDS.map(([f]) => tag(f, LEN));
const T_RESPONSE_CODE = tag(9, VARINT);
const T_TRUNCATED = tag(10, VARINT);
const T_SIZE = tag(11, VARINT);
const T_WRAPPED_KEY = tag(12, LEN);
const T_KEY_ID = tag(13, LEN);
const T_SEALED_REQUEST = tag(14, LEN);
const T_BODY = tag(15, LEN);
const T_TOKENS = tag(16, LEN);
const T_DIAGNOSTIC = tag(17, LEN);
const T_FORWARDED = tag(18, LEN);
const T_STATUSES = tag(19, LEN);
const T_TARGET = tag(20, LEN);
const T_SCHEDULED = tag(21, VARINT);
const T_REDACTIONS = tag(22, LEN);
const T_SHAPE = tag(30, LEN);
const T_DEDUPE_KEY = tag(80, LEN);
const T_DEDUPE_WINDOW = tag(81, VARINT);
const T_DELIVERY = tag(23, LEN);
// CapturedDelivery's own fields.
const T_DESTINATION_ID = tag(1, LEN);
const T_DELIVERY_TARGET = tag(2, LEN);
const T_CAPTURE = tag(1, LEN);

/** The sizes of one capture's strings and lengths, worked out before any byte is written. */
interface Plan {
  size: number;
  strings: number[];
  statuses: number;
  /** Each delivery's message size and its two strings' lengths. */
  deliveries: [size: number, id: number, target: number][];
}

function plan(c: CapturedEvent): Plan {
  const strings: number[] = [];
  let size = 0;
  const text = (t: number[], s: string): void => {
    const n = s.length === 0 ? 0 : Buffer.byteLength(s, "utf8");
    strings.push(n);
    if (n > 0) size += lenField(t.length, n);
  };
  STRING_FIELDS.forEach(([, key], i) => text(T_STRING[i] as number[], c[key]));
  if (c.responseCode !== 0) size += T_RESPONSE_CODE.length + int32Size(c.responseCode);
  if (c.truncated) size += T_TRUNCATED.length + 1;
  if (c.originalSizeBytes !== 0n) size += T_SIZE.length + uint64Size(uint64Of(c.originalSizeBytes));
  if (c.wrappedKey.length > 0) size += lenField(T_WRAPPED_KEY.length, c.wrappedKey.length);
  text(T_KEY_ID, c.keyId);
  if (c.sealedRequest.length > 0) size += lenField(T_SEALED_REQUEST.length, c.sealedRequest.length);
  if (c.body !== undefined) size += lenField(T_BODY.length, c.body.length);
  if (c.searchTokens.length > 0) size += lenField(T_TOKENS.length, c.searchTokens.length);
  text(T_DIAGNOSTIC, c.diagnosticJson);
  text(T_FORWARDED, c.forwardedResponseJson);
  let statuses = 0;
  for (const s of c.sequenceStatuses) statuses += int32Size(s);
  if (statuses > 0) size += lenField(T_STATUSES.length, statuses);
  text(T_TARGET, c.forwardTarget);
  if (c.forwardScheduled) size += T_SCHEDULED.length + 1;
  text(T_REDACTIONS, c.redactionsJson);
  text(T_SHAPE, c.bodyShape);
  if (c.dedupeKey.length > 0) size += lenField(T_DEDUPE_KEY.length, c.dedupeKey.length);
  if (c.dedupeWindowMs !== 0n) size += T_DEDUPE_WINDOW.length + uint64Size(uint64Of(c.dedupeWindowMs));
  const deliveries = c.deliveries.map((d): [number, number, number] => {
    const id = Buffer.byteLength(d.destinationId, "utf8");
    const target = Buffer.byteLength(d.target, "utf8");
    const inner = (id > 0 ? lenField(T_DESTINATION_ID.length, id) : 0) + (target > 0 ? lenField(T_DELIVERY_TARGET.length, target) : 0);
    size += lenField(T_DELIVERY.length, inner);
    return [inner, id, target];
  });
  return { size, strings, statuses, deliveries };
}

/**
 * The CapturedEvents message of these captures, encoded into `alloc(size)`: by default new
 * memory; a caller that encodes call after call may lend the same memory each time.
 */
export function encodeCapturedEvents(captures: readonly CapturedEvent[], alloc: (size: number) => Buffer = Buffer.allocUnsafe): Buffer {
  const plans = captures.map(plan);
  let total = 0;
  for (const p of plans) total += lenField(T_CAPTURE.length, p.size);
  const w = new Writer(alloc(total));
  captures.forEach((c, i) => {
    const p = plans[i] as Plan;
    const s = p.strings;
    w.raw(T_CAPTURE);
    w.varint(p.size);
    STRING_FIELDS.forEach(([, key], j) => w.string(T_STRING[j] as number[], c[key], s[j] as number));
    if (c.responseCode !== 0) {
      w.raw(T_RESPONSE_CODE);
      w.int32(c.responseCode);
    }
    if (c.truncated) w.raw([...T_TRUNCATED, 1]);
    if (c.originalSizeBytes !== 0n) {
      w.raw(T_SIZE);
      w.uint64(uint64Of(c.originalSizeBytes));
    }
    if (c.wrappedKey.length > 0) w.bytes(T_WRAPPED_KEY, c.wrappedKey);
    w.string(T_KEY_ID, c.keyId, s[8] as number);
    if (c.sealedRequest.length > 0) w.bytes(T_SEALED_REQUEST, c.sealedRequest);
    if (c.body !== undefined) w.bytes(T_BODY, c.body);
    if (c.searchTokens.length > 0) w.bytes(T_TOKENS, c.searchTokens);
    w.string(T_DIAGNOSTIC, c.diagnosticJson, s[9] as number);
    w.string(T_FORWARDED, c.forwardedResponseJson, s[10] as number);
    if (p.statuses > 0) {
      w.raw(T_STATUSES);
      w.varint(p.statuses);
      for (const status of c.sequenceStatuses) w.int32(status);
    }
    w.string(T_TARGET, c.forwardTarget, s[11] as number);
    if (c.forwardScheduled) w.raw([...T_SCHEDULED, 1]);
    w.string(T_REDACTIONS, c.redactionsJson, s[12] as number);
    c.deliveries.forEach((d, j) => {
      const [inner, id, target] = p.deliveries[j] as [number, number, number];
      w.raw(T_DELIVERY);
      w.varint(inner);
      w.string(T_DESTINATION_ID, d.destinationId, id);
      w.string(T_DELIVERY_TARGET, d.target, target);
    });
    w.string(T_SHAPE, c.bodyShape, s[13] as number);
    if (c.dedupeKey.length > 0) w.bytes(T_DEDUPE_KEY, c.dedupeKey);
    if (c.dedupeWindowMs !== 0n) {
      w.raw(T_DEDUPE_WINDOW);
      w.uint64(uint64Of(c.dedupeWindowMs));
    }
  });
  if (w.at !== total) throw new Error(`encodeCapturedEvents wrote ${w.at} bytes of ${total}`);
  return w.buf;
}

/** Thrown for bytes that are not a CapturedEvents message. */
export class CapturedEventsFormatError extends Error {
  constructor(message: string) {
    super(`encoded_captures: ${message}`);
    this.name = "CapturedEventsFormatError";
  }
}

const formatError = (message: string): Error => new CapturedEventsFormatError(message);

function emptyCapture(): CapturedEvent {
  return {
    $typeName: "webhookcapture.catalog.v1.CapturedEvent",
    accountId: "",
    endpointId: "",
    method: "",
    remoteIp: "",
    canonicalEventType: "",
    provider: "",
    verification: "",
    verificationFailureReason: "",
    responseCode: 0,
    truncated: false,
    originalSizeBytes: 0n,
    wrappedKey: new Uint8Array(0),
    keyId: "",
    sealedRequest: new Uint8Array(0),
    body: undefined,
    searchTokens: new Uint8Array(0),
    diagnosticJson: "",
    forwardedResponseJson: "",
    sequenceStatuses: [],
    forwardTarget: "",
    forwardScheduled: false,
    redactionsJson: "",
    bodyShape: "",
    deliveries: [],
    dedupeKey: new Uint8Array(0),
    dedupeWindowMs: 0n,
  };
}

function readDelivery(r: Reader): CapturedEvent["deliveries"][number] {
  const d = { $typeName: "webhookcapture.catalog.v1.CapturedDelivery" as const, destinationId: "", target: "" };
  while (r.at < r.end) {
    const t = r.uint();
    const field = Math.floor(t / 8);
    const wireType = t & 7;
    if (field === 1 || field === 2) {
      requireWireType(wireType, LEN, field);
      d[field === 1 ? "destinationId" : "target"] = r.string();
    } else if (field === 0) throw new CapturedEventsFormatError("field number 0");
    else r.skip(wireType);
  }
  return d;
}

const STRING_KEYS: Record<
  number,
  (typeof STRING_FIELDS)[number][1] | "keyId" | "diagnosticJson" | "forwardedResponseJson" | "forwardTarget" | "redactionsJson" | "bodyShape"
> = {
  ...Object.fromEntries(STRING_FIELDS),
  13: "keyId",
  17: "diagnosticJson",
  18: "forwardedResponseJson",
  20: "forwardTarget",
  22: "redactionsJson",
  30: "bodyShape",
};

const BYTES_KEYS: Record<number, "wrappedKey" | "sealedRequest" | "body" | "searchTokens" | "dedupeKey"> = {
  12: "wrappedKey",
  14: "sealedRequest",
  15: "body",
  16: "searchTokens",
  80: "dedupeKey",
};

function requireWireType(wireType: number, wanted: number, field: number): void {
  if (wireType !== wanted) throw new CapturedEventsFormatError(`field ${field} has wire type ${wireType}`);
}

function readCapture(r: Reader): CapturedEvent {
  const c = emptyCapture();
  while (r.at < r.end) {
    const t = r.uint();
    const field = Math.floor(t / 8);
    const wireType = t & 7;
    const key = STRING_KEYS[field];
    if (key !== undefined) {
      requireWireType(wireType, LEN, field);
      c[key] = r.string();
      continue;
    }
    const bytesKey = BYTES_KEYS[field];
    if (bytesKey !== undefined) {
      requireWireType(wireType, LEN, field);
      c[bytesKey] = r.bytes();
      continue;
    }
    switch (field) {
      case 9:
        requireWireType(wireType, VARINT, field);
        c.responseCode = r.int32();
        break;
      case 10:
        requireWireType(wireType, VARINT, field);
        c.truncated = r.varint() !== 0;
        break;
      case 11:
        requireWireType(wireType, VARINT, field);
        c.originalSizeBytes = r.int64();
        break;
      case 19:
        if (wireType === VARINT) c.sequenceStatuses.push(r.int32());
        else {
          requireWireType(wireType, LEN, field);
          const [start, end] = r.span();
          const packed = new Reader(r.buf, start, end, r.fail);
          while (packed.at < end) c.sequenceStatuses.push(packed.int32());
        }
        break;
      case 21:
        requireWireType(wireType, VARINT, field);
        c.forwardScheduled = r.varint() !== 0;
        break;
      case 81:
        requireWireType(wireType, VARINT, field);
        c.dedupeWindowMs = r.int64();
        break;
      case 23: {
        requireWireType(wireType, LEN, field);
        const [start, end] = r.span();
        c.deliveries.push(readDelivery(new Reader(r.buf, start, end, r.fail)));
        break;
      }
      default:
        if (field === 0) throw new CapturedEventsFormatError("field number 0");
        r.skip(wireType);
    }
  }
  return c;
}

/** The captures of an encoded CapturedEvents message; CapturedEventsFormatError when malformed. */
export function decodeCapturedEvents(bytes: Uint8Array): CapturedEvent[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(buf, 0, buf.length, formatError);
  const out: CapturedEvent[] = [];
  while (r.at < r.end) {
    const t = r.uint();
    const field = Math.floor(t / 8);
    const wireType = t & 7;
    if (field === 1 && wireType === LEN) {
      const [start, end] = r.span();
      out.push(readCapture(new Reader(buf, start, end, formatError)));
    } else if (field === 0) throw new CapturedEventsFormatError("field number 0");
    else r.skip(wireType);
  }
  return out;
}
