import { v7 } from "uuid";

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

/**
 * The 32-bit counter a UUIDv7 made with the `uuid` package's `seq` option carries right after
 * its millisecond (bits 52-83, around the version and variant bits): ids of one millisecond
 * sort by it.
 */
export function uuidV7Seq(id: string): number {
  const hex = id.replace(/-/g, "");
  const b = (i: number) => parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return (((b(6) & 0x0f) << 28) | (b(7) << 20) | ((b(8) & 0x3f) << 14) | (b(9) << 6) | (b(10) >>> 2)) >>> 0;
}
