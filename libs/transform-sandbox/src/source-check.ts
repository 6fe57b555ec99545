import { Script } from "node:vm";
import { MAX_SOURCE_BYTES } from "./limits.js";

/** Why a source was refused, as a /v1 field reason (`details.reason`). */
export type TransformSourceReason = "length" | "format" | "required";

export type TransformSourceCheck = { ok: true } | { ok: false; reason: TransformSourceReason; message: string };

/**
 * The check when a transform is saved: at most 64 KiB of UTF-8, a script that parses, and a
 * top-level declaration of `transform` (function, const, let or var).
 *
 * The source is compiled by V8 and never run: compiling executes nothing, which `node:vm` is safe
 * for, and this answer must be synchronous, on the thread that serves the API. Running stays the
 * sandbox's. The declaration is found without running anything: the same source followed by
 * `let transform;` compiles only when nothing at the top level declared `transform` already.
 * (V8 accepts a few newer syntax forms QuickJS does not; a run reports those as a syntax error.)
 */
export function checkTransformSource(source: string): TransformSourceCheck {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > MAX_SOURCE_BYTES) {
    return { ok: false, reason: "length", message: `a transform is at most ${MAX_SOURCE_BYTES} bytes of UTF-8; this one is ${bytes}` };
  }
  const syntax = compileError(source);
  if (syntax) return { ok: false, reason: "format", message: `the transform does not parse: ${syntax}` };
  if (!compileError(`${source}\n;let transform;`)) {
    return {
      ok: false,
      reason: "required",
      message: "the transform must define a function named transform at its top level, e.g. function transform(req) { return req; }",
    };
  }
  return { ok: true };
}

/** The syntax error compiling a script gives, with its line; undefined when it compiles. */
function compileError(source: string): string | undefined {
  try {
    new Script(source, { filename: "transform.js" });
    return undefined;
  } catch (err) {
    if (!(err instanceof Error)) return String(err);
    // V8 puts "transform.js:LINE" and the line's text first in the stack of a syntax error.
    const line = /^transform\.js:(\d+)/.exec(err.stack ?? "")?.[1];
    return `${err.name}: ${err.message}${line ? ` (line ${line})` : ""}`;
  }
}
