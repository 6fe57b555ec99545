import { v7 } from "uuid";
import { isUuid } from "@whc/ids";
import { validationFailed } from "@whc/errors";
import type { Stamp } from "./types.js";

// The catalog's own modules keep importing the shared helpers from here.
export { isUuid, newId } from "@whc/ids";

/** An id field of a request: a UUID, else validation_failed (format). */
export function requireUuid(field: string, value: string): void {
  if (!isUuid(value)) throw validationFailed(field, "format");
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
