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
