import { AppError, type ErrorReason, type FieldReason } from "@whc/errors";

/** An AppError as it crosses from the store's thread: structured clone keeps no classes. */
export interface ErrorMessage {
  reason: ErrorReason;
  message: string;
  field: string | undefined;
  fieldReason: FieldReason | undefined;
  meta: Record<string, string | number>;
  /** The driver's failure behind it, for logs on the calling side. */
  cause: { name: string; message: string; code: string | undefined } | undefined;
}

/** The store throws only AppErrors; anything else failed in the worker itself. */
export function toErrorMessage(err: unknown): ErrorMessage {
  const e = AppError.is(err) ? err : new AppError("internal_error", "embedded store worker failed", { cause: err });
  const cause = e.cause;
  return {
    reason: e.reason,
    message: e.message,
    field: e.field,
    fieldReason: e.fieldReason,
    meta: e.meta,
    cause:
      cause === undefined
        ? undefined
        : cause instanceof Error
          ? { name: cause.name, message: cause.message, code: (cause as { code?: string }).code }
          : { name: "Error", message: String(cause), code: undefined },
  };
}

export function fromErrorMessage(m: ErrorMessage): AppError {
  const cause = m.cause ? Object.assign(new Error(m.cause.message), { name: m.cause.name, code: m.cause.code }) : undefined;
  return new AppError(m.reason, m.message, { field: m.field, fieldReason: m.fieldReason, meta: m.meta, cause });
}
