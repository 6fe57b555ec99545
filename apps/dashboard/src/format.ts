export function time(iso: string): string {
  const d = new Date(iso);
  return `${d.toLocaleDateString()} ${d.toLocaleTimeString()}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function bytesOf(body: string, encoding: "utf8" | "base64" | undefined): Uint8Array {
  if (encoding === "base64") return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(body);
}

/** A classic hex dump: offset, 16 bytes, their printable characters. */
export function hexDump(bytes: Uint8Array, max = 64 * 1024): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, max);
  for (let i = 0; i < end; i += 16) {
    const row = bytes.subarray(i, Math.min(i + 16, end));
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${i.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > max) lines.push(`… ${bytes.length - max} more bytes`);
  return lines.join("\n");
}

export function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}
