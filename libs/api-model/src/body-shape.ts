import { JSON_TYPES, type JsonType } from "./schemas.js";

/**
 * A body's shape as it travels with its capture (CapturedEvent.body_shape, ADR 0090): which
 * paths the JSON body has and which JSON types each holds, never a value. Ingest writes it
 * (it alone sees the plaintext), the catalog learns from it after the commit.
 *
 * The text: "" when the body was not learned (not a JSON object, too large, metadata only);
 * otherwise `.` (complete) or `!` (partial: the walk stopped at a limit, so absent paths say
 * nothing), then one line per path, in the order first met: its type letters, `:`, the path.
 * Paths never hold a newline (keys that are not names become `*`).
 */

/** Bit i of a type mask is JSON_TYPES[i]; its letter is SHAPE_LETTERS[i]. */
export const SHAPE_LETTERS = "oasifbn";
export const SHAPE_COMPLETE = ".";
export const SHAPE_PARTIAL = "!";

/** The mask bit of each type. */
export const TYPE_BIT: Readonly<Record<JsonType, number>> = Object.fromEntries(JSON_TYPES.map((t, i) => [t, 1 << i])) as Record<JsonType, number>;

/** The letters of each type mask. */
export const SHAPE_LETTERS_OF_MASK: readonly string[] = Array.from({ length: 1 << JSON_TYPES.length }, (_, mask) =>
  [...SHAPE_LETTERS].filter((_, i) => mask & (1 << i)).join(""),
);

/** The types of a mask, in JSON_TYPES order. */
export function typesOfMask(mask: number): JsonType[] {
  return JSON_TYPES.filter((_, i) => mask & (1 << i));
}

export interface BodyShape {
  /** Path -> mask of the types met there, in the order first met. */
  paths: Map<string, number>;
  /** The walk stopped at a limit: paths it did not reach are unknown, not absent. */
  partial: boolean;
}

export function encodeBodyShape(shape: BodyShape): string {
  let out = shape.partial ? SHAPE_PARTIAL : SHAPE_COMPLETE;
  for (const [path, mask] of shape.paths) out += `\n${SHAPE_LETTERS_OF_MASK[mask]}:${path}`;
  return out;
}

/** Undefined for "" (not learned) and for text that is not a shape (refused, never half read). */
export function decodeBodyShape(text: string): BodyShape | undefined {
  if (text === "") return undefined;
  const lines = text.split("\n");
  const head = lines[0];
  if (head !== SHAPE_COMPLETE && head !== SHAPE_PARTIAL) return undefined;
  const paths = new Map<string, number>();
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon < 1) return undefined;
    let mask = 0;
    for (let j = 0; j < colon; j += 1) {
      const bit = SHAPE_LETTERS.indexOf(line[j]!);
      if (bit < 0) return undefined;
      mask |= 1 << bit;
    }
    const path = line.slice(colon + 1);
    if (path === "") return undefined;
    paths.set(path, (paths.get(path) ?? 0) | mask);
  }
  return { paths, partial: head === SHAPE_PARTIAL };
}
