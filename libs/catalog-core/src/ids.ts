import { isUuid, uuidV7At, uuidV7Seq, uuidV7Time } from "@whc/ids";
import { validationFailed } from "@whc/errors";
import type { Stamp } from "./types.js";

// The catalog's own modules keep importing the shared helpers from here.
export { isUuid, newId } from "@whc/ids";

/** An id field of a request: a UUID, else validation_failed (format). */
export function requireUuid(field: string, value: string): void {
  if (!isUuid(value)) throw validationFailed(field, "format");
}

/** What an append reads the time from: milliseconds since the epoch. */
export type Clock = () => number;

const MAX_SEQ = 0xffffffff;
/**
 * A new millisecond's counter starts at a random point below 2^30: ids of different endpoints
 * stamped in the same millisecond then differ in 30 more random bits than the 42 the UUID
 * carries anyway, and 3 * 2^30 stamps of one endpoint still fit in the millisecond.
 */
const SEQ_START_RANGE = 0x40000000;

/**
 * The stamp an endpoint gives its next event: a UUIDv7 and the millisecond it carries, strictly
 * after `lastId` (the endpoint's previous stamp, whose millisecond is its receivedAt) in
 * (receivedAt, id) order, also when the clock reads earlier. Stores call it inside the
 * append's transaction, with the endpoint's last stamp read and moved in that transaction
 * (ADR 0008): per endpoint, commit order and (receivedAt, id) order then agree, whatever
 * number of catalog processes append.
 */
export function nextStamp(lastId: string | undefined, now: number): Stamp {
  const lastMs = lastId === undefined ? -1 : uuidV7Time(lastId);
  if (now > lastMs) return stampAt(now, Math.floor(Math.random() * SEQ_START_RANGE));
  const seq = uuidV7Seq(lastId as string);
  return seq < MAX_SEQ ? stampAt(lastMs, seq + 1) : stampAt(lastMs + 1, 0);
}

function stampAt(ms: number, seq: number): Stamp {
  return { id: uuidV7At(ms, seq), receivedAt: ms };
}
