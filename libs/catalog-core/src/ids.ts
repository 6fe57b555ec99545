import { v7 } from "uuid";
import type { Stamp } from "./types.js";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A new UUIDv7: monotonic within this process, even within one millisecond. */
export function newId(): string {
  return v7();
}

/** The millisecond timestamp a UUIDv7 carries in its first 48 bits. */
export function uuidV7Time(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

const MAX_SEQ = 0x7fffffff;

/**
 * The catalog's commit clock. Each stamp is a UUIDv7 and the millisecond it carries; stamps
 * strictly increase in (receivedAt, id) order, also when the wall clock steps back or a
 * restart finds newer events in the store (`floorMs`). Adapters call it inside their
 * serialized write, so commit order and list order agree and forward cursors never skip.
 */
export function createStamper(floorMs = 0, clock: () => number = Date.now): () => Stamp {
  let lastMs = floorMs;
  let seq = -1;
  return () => {
    let ms = Math.max(clock(), lastMs);
    if (ms === lastMs) {
      seq += 1;
      if (seq > MAX_SEQ) {
        ms += 1;
        seq = 0;
      }
    } else {
      seq = 0;
    }
    lastMs = ms;
    return { id: v7({ msecs: ms, seq }), receivedAt: ms };
  };
}
