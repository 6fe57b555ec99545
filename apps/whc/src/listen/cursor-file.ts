import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Cursor } from "@whc/api-model";

/** `$XDG_STATE_HOME/whc`, else `~/.local/state/whc` (the XDG base directory default). */
export function stateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  // The specification ignores a relative path.
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "whc");
  return path.join(env.HOME || os.homedir(), ".local", "state", "whc");
}

export interface CursorFile {
  readonly path: string;
  /** The saved cursor, or undefined when there is none (or it cannot be read as one). */
  read(): Promise<Cursor | undefined>;
  /** Replaces the saved cursor; a crash leaves the old one or the new one, never half of one. */
  write(cursor: Cursor): Promise<void>;
}

interface Saved {
  apiUrl: string;
  endpointId: string;
  at: string;
  id: string;
}

function isSaved(value: unknown): value is Saved {
  const v = value as Partial<Saved> | null;
  return typeof v === "object" && v !== null && typeof v.at === "string" && typeof v.id === "string" && !Number.isNaN(Date.parse(v.at));
}

/**
 * Where `whc listen` is in one endpoint's events: one file per (API base URL, endpoint id),
 * so listening to the same endpoint id on another installation starts afresh.
 */
export function cursorFile(dir: string, apiUrl: string, endpointId: string): CursorFile {
  const api = createHash("sha256").update(apiUrl).digest("hex").slice(0, 16);
  const file = path.join(dir, `listen-${endpointId}-${api}.json`);
  return {
    path: file,
    async read() {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
      try {
        const saved = JSON.parse(text) as unknown;
        return isSaved(saved) ? { at: saved.at, id: saved.id } : undefined;
      } catch {
        return undefined;
      }
    },
    async write(cursor) {
      await mkdir(dir, { recursive: true });
      const saved: Saved = { apiUrl, endpointId, at: cursor.at, id: cursor.id };
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(saved)}\n`);
      await rename(temporary, file);
    },
  };
}
