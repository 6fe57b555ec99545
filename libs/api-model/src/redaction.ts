import { z } from "zod";
import { extension, headerName, storedJsonOf } from "./common.js";

/**
 * Per-endpoint redaction (design §16, ADR 0045): what ingest replaces in a capture after
 * verifying its signature and before sealing and indexing it. Validated here, once, for the
 * gateway, the CLI and the dashboard alike; ingest compiles the stored settings
 * (@whc/ingest-core redact.ts).
 */

export const REDACTED = "[redacted]";
export const MAX_REDACT_HEADERS = 50;
export const MAX_REDACT_JSON_PATHS = 50;
export const MAX_REDACT_PATTERNS = 10;
export const MAX_JSON_PATH_LENGTH = 200;
export const MAX_PATTERN_LENGTH = 200;
/** The most a pattern may repeat anything (`{m,n}`: n at most this). */
export const MAX_PATTERN_REPEAT = 1000;
/**
 * The most backtracking steps an endpoint's patterns together may take from one position of a
 * body (ADR 0045): each one's worst case, worked out from its syntax by patternCost. Measured,
 * the matcher spends about 2.7 ns per step: at this many, under a second on a 1 MiB body built
 * to defeat them (docs/performance.md), and microseconds on an ordinary webhook.
 */
export const MAX_PATTERN_COST = 256;

// ---------------------------------------------------------------------------------------------
// JSONPath subset: $.a.b, $.a[0], $.a[*].b

/** One step of a JSONPath: an object member by name, an array element by index, or every child. */
export type JsonPathStep = { key: string } | { index: number } | { any: true };

const STEP = /\.([A-Za-z0-9_$-]+)|\[(\d{1,9})\]|\[\*\]/y;

/**
 * The steps of a path in the subset (`$` then `.name`, `[n]` or `[*]`, at least one), or
 * undefined when it is not in it. `.name` takes letters, digits, `_`, `$` and `-`.
 */
export function parseJsonPath(path: string): JsonPathStep[] | undefined {
  if (!path.startsWith("$") || path.length < 2) return undefined;
  const steps: JsonPathStep[] = [];
  STEP.lastIndex = 1;
  while (STEP.lastIndex < path.length) {
    const at = STEP.lastIndex;
    const m = STEP.exec(path);
    if (!m || m.index !== at) return undefined;
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else steps.push({ any: true });
  }
  return steps;
}

// ---------------------------------------------------------------------------------------------
// Patterns: compiled as `gu` regular expressions, with a bounded cost (ADR 0045).

/**
 * A pattern's cost in the linear form `steps + exits x c`: the work a backtracking matcher does
 * in it from one position, when what follows it costs c per way out (`exits` is how many ways
 * it can end). Saturates at Infinity past anything allowed.
 */
interface Cost {
  steps: number;
  exits: number;
}

const ONE: Cost = { steps: 1, exits: 1 };
const NOTHING: Cost = { steps: 0, exits: 1 };
const cap = (n: number) => (n > 1e9 ? Infinity : n);
const then = (a: Cost, b: Cost): Cost => ({ steps: cap(a.steps + a.exits * b.steps), exits: cap(a.exits * b.exits) });
const either = (a: Cost, b: Cost): Cost => ({ steps: cap(a.steps + b.steps), exits: cap(a.exits + b.exits) });

/** `x{min,max}`: x min times, then up to max - min more, each optional (greedy or lazy, the same work). */
function repeated(x: Cost, min: number, max: number): Cost {
  let cost = NOTHING;
  for (let i = 0; i < min && cost.steps !== Infinity; i += 1) cost = then(cost, x);
  let optional = NOTHING;
  for (let i = min; i < max && optional.steps !== Infinity; i += 1) optional = either(then(x, optional), NOTHING);
  return then(cost, optional);
}

class PatternRefused extends Error {}

/**
 * A reader of the pattern's syntax, only as far as its cost needs: the engine has already
 * accepted the pattern (with the `u` flag), so what it reads is well formed.
 */
class CostReader {
  at = 0;
  constructor(readonly p: string) {}

  alternation(): Cost {
    let cost = this.sequence();
    while (this.p[this.at] === "|") {
      this.at += 1;
      cost = either(cost, this.sequence());
    }
    return cost;
  }

  sequence(): Cost {
    let cost = NOTHING;
    while (this.at < this.p.length && this.p[this.at] !== "|" && this.p[this.at] !== ")") {
      cost = then(cost, this.quantified(this.atom()));
    }
    return cost;
  }

  atom(): Cost {
    const c = this.p[this.at] as string;
    if (c === "(") return this.group();
    if (c === "[") return this.characterClass();
    if (c === "\\") return this.escape();
    this.at += 1;
    return ONE;
  }

  group(): Cost {
    const rest = this.p.slice(this.at);
    if (/^\(\?<?[=!]/.test(rest)) throw new PatternRefused("lookahead and lookbehind are not allowed");
    const named = /^\(\?<[^>]+>/.exec(rest);
    this.at += named ? named[0].length : rest.startsWith("(?:") ? 3 : 1;
    const cost = this.alternation();
    this.at += 1;
    return cost;
  }

  characterClass(): Cost {
    this.at += 1;
    while (this.p[this.at] !== "]") this.at += this.p[this.at] === "\\" ? 2 : 1;
    this.at += 1;
    return ONE;
  }

  escape(): Cost {
    const next = this.p[this.at + 1] as string;
    if (/[1-9]/.test(next) || next === "k") throw new PatternRefused("backreferences are not allowed");
    // \p{...}, \u{...}, \uXXXX, \xXX, \cX are one character each; so is any other escape.
    const long = /^\\(?:[pP]\{[^}]*\}|u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|c[A-Za-z])/.exec(this.p.slice(this.at));
    this.at += long ? long[0].length : 2;
    return ONE;
  }

  quantified(x: Cost): Cost {
    const q = /^(?:([*+?])|\{(\d+)(,(\d*))?\})\??/.exec(this.p.slice(this.at));
    if (!q) return x;
    this.at += q[0].length;
    if (q[1] === "*" || q[1] === "+" || (q[3] !== undefined && q[4] === "")) {
      throw new PatternRefused("every repetition needs an upper bound: write {m,n} instead of *, + or {m,}");
    }
    if (q[1] === "?") return repeated(x, 0, 1);
    const min = Number(q[2]);
    const max = q[4] !== undefined ? Number(q[4]) : min;
    if (max > MAX_PATTERN_REPEAT) throw new PatternRefused(`a repetition may be at most {${MAX_PATTERN_REPEAT}}`);
    return repeated(x, min, max);
  }
}

/** The pattern as ingest runs it: global, Unicode. Throws a SyntaxError for a pattern that does not compile. */
export function compilePattern(pattern: string): RegExp {
  return new RegExp(pattern, "gu");
}

/**
 * The worst-case backtracking steps of a pattern from one position of the text (ADR 0045), or
 * why it is refused whatever its cost: no unbounded repetition, no backreference, no lookaround.
 */
export function patternCost(pattern: string): { cost: number } | { refused: string } {
  try {
    const reader = new CostReader(pattern);
    const c = reader.alternation();
    return { cost: c.steps + c.exits };
  } catch (err) {
    if (err instanceof PatternRefused) return { refused: err.message };
    throw err;
  }
}

/** Why a pattern cannot be used, in words for the caller; undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compilePattern(pattern);
  } catch (err) {
    return `does not compile: ${(err as Error).message}`;
  }
  const judged = patternCost(pattern);
  if ("refused" in judged) return judged.refused;
  if (judged.cost > MAX_PATTERN_COST) {
    return `may backtrack ${judged.cost === Infinity ? "without bound" : `${judged.cost} steps`} at one position (at most ${MAX_PATTERN_COST}): narrow its repetitions`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The /v1 shapes

const jsonPath = z
  .string()
  .max(MAX_JSON_PATH_LENGTH)
  .refine((p) => parseJsonPath(p) !== undefined, { message: "not in the JSONPath subset: $ then .name, [n] or [*] steps", params: { reason: "format" } });

const pattern = z
  .string()
  .min(1)
  .max(MAX_PATTERN_LENGTH)
  .superRefine((p, ctx) => {
    const problem = patternProblem(p);
    if (problem) ctx.addIssue({ code: "custom", message: problem, params: { reason: "format" } });
  });

/** The patterns' costs added up: what a capture may cost at each position of its body. */
function totalCost(patterns: readonly string[]): number {
  let total = 0;
  for (const p of patterns) {
    const judged = patternCost(p);
    total += "cost" in judged ? judged.cost : Infinity;
  }
  return total;
}

/** An endpoint's `redact` (design §16): every list optional, none empty of meaning. */
export const redactSettings = z
  .strictObject({
    headers: z
      .array(headerName)
      .max(MAX_REDACT_HEADERS)
      .optional()
      .describe("Header names (any case) whose values are stored as `[redacted]`."),
    jsonPaths: z
      .array(jsonPath)
      .max(MAX_REDACT_JSON_PATHS)
      .optional()
      .describe('JSON values stored as the string `"[redacted]"`, the rest of the body byte for byte: `$` then `.name`, `[n]` or `[*]` steps (`$.card.number`, `$.items[0].pan`, `$.items[*].pan`).'),
    patterns: z
      .array(pattern)
      .max(MAX_REDACT_PATTERNS)
      .refine((ps) => totalCost(ps) <= MAX_PATTERN_COST, {
        message: `together the patterns may backtrack more than ${MAX_PATTERN_COST} steps at one position: narrow their repetitions`,
        params: { reason: "range" },
      })
      .optional()
      .describe(
        `Regular expressions (JavaScript, Unicode) whose matches in a UTF-8 body are stored as \`[redacted]\`: at most ${MAX_PATTERN_LENGTH} characters, every repetition bounded ({m,n}, not * or +), no backreferences or lookaround, and at most ${MAX_PATTERN_COST} backtracking steps at one position, all patterns together (ADR 0045).`,
      ),
  })
  .meta({
    ...extension,
    description: "What ingest replaces after verifying a capture's signature and before storing and indexing it (design §16).",
  });
export type RedactSettings = z.infer<typeof redactSettings>;

/** An event's `redactions`: how many values of each kind were replaced. */
export const redactionCounts = z
  .object({ headers: z.int().min(0), jsonPaths: z.int().min(0), patterns: z.int().min(0) })
  .meta({ ...extension, description: "How many header values, JSON values and pattern matches were replaced before storing (design §16); absent when none was." });
export type RedactionCounts = z.infer<typeof redactionCounts>;

/** Whether settings redact anything at all: an empty `redact` is none. */
export function redactsAnything(s: RedactSettings | undefined): s is RedactSettings {
  return Boolean(s && ((s.headers?.length ?? 0) > 0 || (s.jsonPaths?.length ?? 0) > 0 || (s.patterns?.length ?? 0) > 0));
}

/** The stored settings (`redact_json`); validated when saved, so a bad one reads as none. */
export function redactSettingsOf(json: string): RedactSettings | undefined {
  const settings = storedJsonOf(redactSettings, json);
  return redactsAnything(settings) ? settings : undefined;
}

/** The stored counts (`redactions_json`): undefined when nothing was redacted. */
export function redactionCountsOf(json: string): RedactionCounts | undefined {
  return storedJsonOf(redactionCounts, json);
}
