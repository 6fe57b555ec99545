/** How the page writes numbers, sizes and times: one place, so every view reads alike. */

const count = new Intl.NumberFormat("en-US");

/** "1 event", "2 events", "1,204 events"; `many` for irregular plurals. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count.format(n)} ${n === 1 ? one : many}`;
}

/** Bytes in human units: "141 B", "2 KiB", "1.5 MiB". */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KiB"] : bytes < 1024 ** 3 ? [bytes / 1024 ** 2, "MiB"] : [bytes / 1024 ** 3, "GiB"];
  return `${value < 10 ? value.toFixed(1).replace(/\.0$/, "") : Math.round(value)} ${unit}`;
}

/** A duration in milliseconds: "840 ms", "2.4 s", "3 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1).replace(/\.0$/, "")} s`;
  return `${Math.round(ms / 60_000)} min`;
}

const UNITS: [number, string][] = [
  [60, "s"],
  [60, "min"],
  [24, "h"],
  [30, "d"],
  [12, "mo"],
  [Infinity, "y"],
];

/** "just now", "12 s ago", "3 min ago", "in 2 min": for the exact time, `exactTime`. */
export function relativeTime(iso: string, now = Date.now()): string {
  const diff = (now - Date.parse(iso)) / 1000;
  let value = Math.abs(diff);
  if (value < 5) return "just now";
  for (const [size, unit] of UNITS) {
    if (value < size) {
      const n = Math.floor(value);
      return diff >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
    }
    value /= size;
  }
  return iso;
}

/** The exact instant, unambiguous whatever the reader's locale: ISO 8601 in UTC. */
export function exactTime(iso: string): string {
  return new Date(iso).toISOString();
}

/** The time of day in the reader's locale, 24-hour, with milliseconds: "18:46:50.428". */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function bytesOf(body: string, encoding: "utf8" | "base64" | undefined): Uint8Array {
  if (encoding === "base64") return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(body);
}

/** A classic hex dump: offset, 16 bytes, their printable characters; fixed width, never wrapped. */
export function hexDump(bytes: Uint8Array, max = 64 * 1024): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, max);
  for (let i = 0; i < end; i += 16) {
    const row = bytes.subarray(i, Math.min(i + 16, end));
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${i.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > max) lines.push(`… ${plural(bytes.length - max, "more byte")}`);
  return lines.join("\n");
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
