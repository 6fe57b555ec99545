import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";

/**
 * How the files under WHC_DATA_DIR are made (the catalog, its -wal and -shm, the key ring, the
 * development key): readable by the service's own user only, 0600 files in a 0700 directory,
 * whatever the umask. Decided once here; every writer of the data directory uses it.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and missing parents) 0700. An existing directory is left as it is, since it
 * may be shared (`/tmp`, a home): its mode is returned so the caller can warn when others may
 * read it (`openedTo`: the group/other bits, 0 when private).
 */
export function ensurePrivateDir(dir: string): { created: boolean; openedTo: number } {
  const made = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (made !== undefined) chmodSync(dir, PRIVATE_DIR_MODE); // the umask may have taken bits off, never added; be exact
  return { created: made !== undefined, openedTo: statSync(dir).mode & 0o077 };
}

/**
 * Makes sure `file` exists and is 0600: created empty when missing (so a library that creates
 * it, such as SQLite, finds it there with its mode), tightened when an earlier version left it
 * readable by others. `mustExist: false` only tightens a file that is there.
 */
export function ensurePrivateFile(file: string, { mustExist = true }: { mustExist?: boolean } = {}): void {
  let mode: number | undefined;
  try {
    mode = statSync(file).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (mode === undefined) {
    if (!mustExist) return;
    closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    chmodSync(file, PRIVATE_FILE_MODE);
  } else if (mode !== PRIVATE_FILE_MODE) {
    try {
      chmodSync(file, PRIVATE_FILE_MODE);
    } catch (err) {
      // Another user's file (an operator's copy) stays as they made it; it still works.
      if ((err as NodeJS.ErrnoException).code !== "EPERM") throw err;
    }
  }
}
