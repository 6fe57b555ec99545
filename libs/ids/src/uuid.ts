import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A new UUIDv7: monotonic within this process, even within one millisecond. */
export function newId(): string {
  return v7();
}

/** Each ASCII character's value as a hex digit, -1 for the others. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d += 1) {
  HEX_VALUE[d.toString(16).charCodeAt(0)] = d;
  HEX_VALUE[d.toString(16).toUpperCase().charCodeAt(0)] = d;
}

/** The value of the hex digits of `id` from `start` to `end`, or -1 when one is not a hex digit. */
function hexValue(id: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i += 1) {
    const c = id.charCodeAt(i);
    const digit = c < 128 ? (HEX_VALUE[c] as number) : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The millisecond timestamp a UUIDv7 carries in its first 48 bits. Read digit by digit, no
 * string made: the catalog reads its endpoints' last stamps at every append.
 */
export function uuidV7Time(id: string): number {
  const high = hexValue(id, 0, 8);
  const low = hexValue(id, 9, 13);
  if (high < 0 || low < 0 || id.charCodeAt(8) !== 0x2d) return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return high * 0x10000 + low;
}

/**
 * The 32-bit counter a UUIDv7 made with the `uuid` package's `seq` option carries right after
 * its millisecond (bits 52-83, around the version and variant bits): ids of one millisecond
 * sort by it.
 */
export function uuidV7Seq(id: string): number {
  // Bytes 6-7, 8-9 and 10 of the dashed form (8-4-4-4-12).
  const b67 = hexValue(id, 14, 18);
  const b89 = hexValue(id, 19, 23);
  const b10 = hexValue(id, 24, 26);
  if (b67 < 0 || b89 < 0 || b10 < 0 || id.length !== 36) {
    const hex = id.replace(/-/g, "");
    const b = (i: number) => parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return (((b(6) & 0x0f) << 28) | (b(7) << 20) | ((b(8) & 0x3f) << 14) | (b(9) << 6) | (b(10) >>> 2)) >>> 0;
  }
  return (((b67 & 0x0fff) << 20) | ((b89 & 0x3fff) << 6) | (b10 >>> 2)) >>> 0;
}

const BYTE_HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

// Random bytes drawn from the CSPRNG 4 KiB at a time, six per id.
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;

/**
 * The UUIDv7 of millisecond `ms` with the 32-bit counter `seq` after it, then six random bytes
 * (`random`'s first six, else the CSPRNG's): what the `uuid` package's v7({ msecs, seq }) makes,
 * written without its two arrays and its lower-casing copy (every append stamps each event).
 */
export function uuidV7At(ms: number, seq: number, random?: Uint8Array): string {
  let r = random;
  let o = 0;
  if (r === undefined) {
    if (randomAt + 6 > randomPool.length) {
      randomFillSync(randomPool);
      randomAt = 0;
    }
    r = randomPool;
    o = randomAt;
    randomAt += 6;
  }
  const h = BYTE_HEX;
  // As the uuid package writes them: `& 0xff` of a quotient keeps its whole part's low byte.
  return (
    (h[(ms / 0x10000000000) & 0xff] as string) +
    h[(ms / 0x100000000) & 0xff] +
    h[(ms / 0x1000000) & 0xff] +
    h[(ms / 0x10000) & 0xff] +
    "-" +
    h[(ms / 0x100) & 0xff] +
    h[ms & 0xff] +
    "-" +
    h[0x70 | ((seq >>> 28) & 0x0f)] +
    h[(seq >>> 20) & 0xff] +
    "-" +
    h[0x80 | ((seq >>> 14) & 0x3f)] +
    h[(seq >>> 6) & 0xff] +
    "-" +
    h[((seq << 2) & 0xff) | ((r[o] as number) & 0x03)] +
    h[r[o + 1] as number] +
    h[r[o + 2] as number] +
    h[r[o + 3] as number] +
    h[r[o + 4] as number] +
    h[r[o + 5] as number]
  );
}
