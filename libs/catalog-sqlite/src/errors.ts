import { AppError } from "@whc/errors";

/**
 * Result codes that say the file or the machine cannot serve now (locked, disk full or
 * read-only, I/O failing): the caller answers 503 and may retry. Extended codes
 * (SQLITE_IOERR_FSYNC, SQLITE_READONLY_DBMOVED...) count as their primary code.
 */
const UNAVAILABLE = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_IOERR",
  "SQLITE_FULL",
  "SQLITE_READONLY",
  "SQLITE_CANTOPEN",
  "SQLITE_NOMEM",
  "SQLITE_PROTOCOL",
]);

function resultCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : "";
}

function primary(code: string): string {
  return code.split("_", 2).join("_");
}

/** The driver failed because the file or the machine cannot take a write now (disk full...). */
export function isStoreUnavailable(err: unknown): boolean {
  return UNAVAILABLE.has(primary(resultCode(err)));
}

/**
 * A failure of the embedded store as the AppError callers branch on. Only the result code goes
 * into the message (the driver's own text can name tables and files); the original error is
 * the cause, for logs.
 */
export function translateSqliteError(err: unknown, method: string, open: boolean): AppError {
  if (AppError.is(err)) return err;
  if (!open) return new AppError("service_unavailable", "embedded store closed", { cause: err });
  const code = resultCode(err);
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
    // The only unique column an endpoint is given by its caller is its slug (ids are new UUIDs).
    if (method === "createEndpoint") return new AppError("slug_taken", "slug taken", { field: "slug", cause: err });
    return new AppError("conflict", `embedded store: ${code}`, { cause: err });
  }
  if (isStoreUnavailable(err)) return new AppError("service_unavailable", `embedded store: ${code}`, { cause: err });
  return new AppError("internal_error", `embedded store: ${code || "failed"}`, { cause: err });
}
