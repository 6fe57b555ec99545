/** Batches whose bytes are larger than this get a buffer of their own, cloned with the message. */
const MAX_SHARED_BYTES = 1024 * 1024;
/** The smallest shared buffer made: a batch of 25 ordinary captures takes about 60 KB. */
const MIN_SHARED_BYTES = 256 * 1024;
/** Shared buffers kept for reuse; one more is made while all are lent out. */
const KEEP = 4;

/**
 * Shared memory for the bytes of appends on their way to the store's thread (append-codec.ts):
 * written once here and read in place there, so a batch's bodies are not allocated, copied and
 * freed again on the store's side for every batch (its thread 5 % cheaper under load:
 * docs/performance.md, "The append's hand-over"). A buffer is lent for one call and given back
 * once the store has answered it (or failed): the store's thread copies the bytes into its
 * pages within the call, and nothing there keeps a view after it.
 */
export function createSharedBytes() {
  const free: SharedArrayBuffer[] = [];
  return {
    /** A view of `length` bytes, and the function that gives its memory back (a no-op for memory of its own). */
    lend(length: number): { bytes: Uint8Array; giveBack: () => void } {
      if (length > MAX_SHARED_BYTES) return { bytes: new Uint8Array(length), giveBack: () => undefined };
      const at = free.findIndex((b) => b.byteLength >= length);
      const buffer = at >= 0 ? (free.splice(at, 1)[0] as SharedArrayBuffer) : new SharedArrayBuffer(Math.max(MIN_SHARED_BYTES, length));
      let given = false;
      return {
        bytes: new Uint8Array(buffer, 0, length),
        giveBack: () => {
          if (given) return;
          given = true;
          if (free.length < KEEP) free.push(buffer);
        },
      };
    },
  };
}
