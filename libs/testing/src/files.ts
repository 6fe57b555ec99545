import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/**
 * Which of `needles` appear in the raw bytes of `blobs` (name -> bytes), as "needle in name".
 * Each needle is looked for as latin1/UTF-8 (what SQLite, JSON and BSON write for ASCII) and as
 * UTF-16, so a test that a secret is nowhere at rest does not miss one written wider.
 */
export function needlesIn(blobs: Iterable<readonly [name: string, bytes: Uint8Array]>, needles: readonly string[]): string[] {
  const found: string[] = [];
  for (const [name, bytes] of blobs) {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const needle of needles) {
      if (b.includes(Buffer.from(needle, "latin1")) || b.includes(Buffer.from(needle, "utf16le"))) found.push(`${needle} in ${name}`);
    }
  }
  return found;
}

/** needlesIn over every file under `dir`: the database, its WAL, keys, anything. */
export function needlesInFiles(dir: string, needles: readonly string[]): string[] {
  return needlesIn(
    filesUnder(dir).map((file) => [path.relative(dir, file), readFileSync(file)] as const),
    needles,
  );
}
