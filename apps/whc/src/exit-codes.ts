import { CommanderError } from "commander";
import { ApiError } from "@whc/api-model";
import { AppError } from "@whc/errors";

/**
 * What `whc` exits with, so scripts can branch on the kind of failure without reading stderr.
 * One table: the help epilogue, the README and docs print it from here.
 */
export const EXIT_CODES = {
  ok: { code: 0, meaning: "done" },
  badInput: {
    code: 1,
    meaning: "bad input: a usage error (unknown command or option, a missing or invalid value), a request the API refused as invalid (400, 409, 413), or any other failure",
  },
  notFound: { code: 2, meaning: "not found: no endpoint with that id or slug, no such event, or nothing stored to print (404)" },
  auth: { code: 3, meaning: "not authenticated: no API key given, or the key is not valid (401)" },
  unavailable: {
    code: 4,
    meaning: "the service could not answer: unreachable, unavailable or failing (5xx), or an export cut short",
  },
  refused: {
    code: 5,
    meaning: "refused by the endpoint's or the account's rules, or the key's scopes: replay disabled or a scope the key lacks (403), daily replay limit or a quota (429)",
  },
  interrupted: { code: 130, meaning: "stopped by a second Ctrl-C" },
} as const;

export type ExitKind = keyof typeof EXIT_CODES;

const brand = Symbol.for("webhook-capture.CliError");

/** A failure the CLI itself finds, with the exit code it means. */
export class CliError extends Error {
  readonly [brand] = true;
  constructor(
    message: string,
    readonly kind: ExitKind = "badInput",
  ) {
    super(message);
    this.name = "CliError";
  }
  static is(value: unknown): value is CliError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

function apiKind(err: ApiError): ExitKind {
  if (err.code === "no_api_key" || err.status === 401) return "auth";
  if (err.status === 0 || err.status >= 500) return "unavailable";
  if (err.status === 404) return "notFound";
  if (err.status === 403 || err.status === 429) return "refused";
  return "badInput";
}

/** `whc keys` talks to the catalog itself: its failures are AppErrors. */
function catalogKind(err: AppError): ExitKind {
  if (err.reason === "not_found") return "notFound";
  if (err.reason === "service_unavailable" || err.reason === "timeout" || err.reason === "internal_error") return "unavailable";
  return "badInput";
}

/** What kind of failure a command threw (a usage error is bad input). */
export function exitKindOf(err: unknown): ExitKind {
  if (ApiError.is(err)) return apiKind(err);
  if (CliError.is(err)) return err.kind;
  if (AppError.is(err)) return catalogKind(err);
  return "badInput";
}

/** The exit code of whatever a command threw. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_CODES.badInput.code;
  return EXIT_CODES[exitKindOf(err)].code;
}

/** What a failure says to a person, after `error: `; validation_failed names the field and why. */
export function errorText(err: unknown): string {
  if (ApiError.is(err)) {
    const { field, reason } = err.details;
    const where = typeof field === "string" ? `: ${field}${typeof reason === "string" ? ` (${reason})` : ""}` : "";
    const message = where ? err.message.replace(/\.$/, "") : err.message;
    return `${message}${where}${err.code ? ` (${err.code}` : ""}${err.requestId ? `, request ${err.requestId})` : err.code ? ")" : ""}`;
  }
  return (err as { message?: string }).message ?? String(err);
}

/** `head` then `text`, in lines of at most `width` characters, the later ones indented as far as `head` reaches. */
function wrapped(head: string, text: string, width: number): string {
  const indent = " ".repeat(head.length);
  const lines: string[] = [];
  let line = head;
  text.split(" ").forEach((word, i) => {
    if (i > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = i === 0 ? line + word : `${line} ${word}`;
  });
  return [...lines, line].join("\n");
}

/** The table as the help epilogue shows it, wrapped for an 80-column terminal. */
export function exitCodesHelp(): string {
  const rows = Object.values(EXIT_CODES).map(({ code, meaning }) => wrapped(`  ${String(code).padStart(3)}  `, meaning, 80));
  return ["Exit codes:", ...rows].join("\n");
}
