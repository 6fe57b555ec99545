import { Context } from "mingo";
import { Query } from "mingo/query";
import * as queryOperators from "mingo/operators/query";
import { FILTER_OPERATORS, filterProblem, type DestinationFilter } from "@whc/api-model";
import { headerValueText } from "@whc/api-model/present";

/**
 * Destination filters (design §17): a capture's view, and filters compiled with mingo into a
 * context holding only the operators §17 allows, so an operator that slipped past the save-time
 * check (filterProblem) is refused by the evaluator too, never run.
 */

/** What a filter sees of a capture. */
export interface FilterView {
  method: string;
  /** The sub-path after the webhookUrl, without its query ("" when none). */
  path: string;
  /** The query's parameters, each its first value (names as sent). */
  query: Record<string, string>;
  /** Lower-case names, each its first value. */
  headers: Record<string, string>;
  /** The parsed JSON, else the UTF-8 text, else null (binary). Read on first use. */
  readonly body: unknown;
  /** The canonical event type; null when none was found. */
  eventType: string | null;
  provider: string;
  verification: string;
}

/** A capture as ingest holds it before sealing, or as a reader opens it. */
export interface CaptureParts {
  method: string;
  /** What followed the endpoint's webhook URL: sub-path and query ("", "/ci", "/ci?x=1", "?x=1"). */
  rest: string;
  headers: readonly (readonly [string, string])[];
  body: Uint8Array | undefined;
  eventType: string;
  provider: string;
  verification: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body as a filter sees it: parsed JSON, else UTF-8 text, else null. */
export function bodyValue(body: Uint8Array | undefined): unknown {
  if (!body || body.length === 0) return "";
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return null;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function firstValues(pairs: Iterable<readonly [string, string]>, lowerCase: boolean, decode: (v: string) => string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of pairs) {
    const key = lowerCase ? name.toLowerCase() : name;
    if (!(key in out)) out[key] = decode(value);
  }
  return out;
}

/**
 * The view of a capture. Its query, headers and body are made only when a filter reads them, each
 * once: a filter on the event type, the usual one, reads none of them, and listing a capture's
 * headers cost more than evaluating the filter (design §20). They are own, enumerable accessors
 * of a literal, as plain fields would be to the evaluator.
 */
export function filterView(c: CaptureParts): FilterView {
  const at = c.rest.indexOf("?");
  let query: Record<string, string> | undefined;
  let headers: Record<string, string> | undefined;
  let body: { value: unknown } | undefined;
  return {
    method: c.method,
    path: at < 0 ? c.rest : c.rest.slice(0, at),
    get query() {
      return (query ??= at < 0 ? (Object.create(null) as Record<string, string>) : firstValues(new URLSearchParams(c.rest.slice(at + 1)), false, (v) => v));
    },
    get headers() {
      return (headers ??= firstValues(c.headers, true, headerValueText));
    },
    eventType: c.eventType || null,
    provider: c.provider,
    verification: c.verification,
    get body() {
      body ??= { value: bodyValue(c.body) };
      return body.value;
    },
  };
}

const context = Context.init({
  query: Object.fromEntries(FILTER_OPERATORS.map((op) => [op, queryOperators[op]])),
});

export interface CompiledFilter {
  /** Whether the view matches; a filter that fails on it (a bug) matches nothing. */
  test(view: FilterView): boolean;
}

export class FilterRefused extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** No filter: every capture. */
export const MATCH_ALL: CompiledFilter = { test: () => true };

/**
 * A filter compiled once (per endpoint lookup in ingest). Throws FilterRefused for one the
 * save-time check, or mingo itself, would not run.
 */
export function compileFilter(filter: DestinationFilter | undefined, onError?: (err: unknown) => void): CompiledFilter {
  if (!filter) return MATCH_ALL;
  const problem = filterProblem(filter);
  if (problem) throw new FilterRefused(problem.path.join("."), problem.reason, problem.message);
  let query: Query;
  try {
    query = new Query(filter, { context });
  } catch (err) {
    throw new FilterRefused("", "format", (err as Error).message);
  }
  return {
    test(view) {
      try {
        return query.test(view as unknown as Record<string, unknown>);
      } catch (err) {
        onError?.(err);
        return false;
      }
    },
  };
}
