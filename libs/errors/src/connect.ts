import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ErrorDetailSchema } from "@whc/contracts";
import { AppError, type ErrorReason, type FieldReason } from "./app-error.js";

const codeOfReason: Record<ErrorReason, Code> = {
  unauthorized: Code.Unauthenticated,
  not_found: Code.NotFound,
  validation_failed: Code.InvalidArgument,
  malformed_json: Code.InvalidArgument,
  unsupported_media_type: Code.InvalidArgument,
  payload_too_large: Code.ResourceExhausted,
  method_not_allowed: Code.Unimplemented,
  slug_taken: Code.AlreadyExists,
  conflict: Code.Aborted,
  replay_disabled: Code.PermissionDenied,
  forbidden: Code.PermissionDenied,
  target_not_allowed: Code.InvalidArgument,
  forward_not_configured: Code.FailedPrecondition,
  trigger_unavailable: Code.FailedPrecondition,
  signing_unsupported: Code.FailedPrecondition,
  replay_limit_exceeded: Code.ResourceExhausted,
  quota_exceeded: Code.ResourceExhausted,
  egress_capacity_exhausted: Code.ResourceExhausted,
  service_unavailable: Code.Unavailable,
  timeout: Code.DeadlineExceeded,
  internal_error: Code.Internal,
};

const reasonOfCode: Partial<Record<Code, ErrorReason>> = {
  [Code.Unauthenticated]: "unauthorized",
  [Code.NotFound]: "not_found",
  [Code.InvalidArgument]: "validation_failed",
  [Code.AlreadyExists]: "conflict",
  [Code.PermissionDenied]: "replay_disabled",
  [Code.Unavailable]: "service_unavailable",
  [Code.DeadlineExceeded]: "timeout",
  [Code.Canceled]: "service_unavailable",
  [Code.FailedPrecondition]: "forward_not_configured",
};

/** Server side: turns whatever a handler threw into a ConnectError carrying the reason. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (AppError.is(err)) {
    const detail = create(ErrorDetailSchema, {
      reason: err.reason,
      field: err.field ?? "",
      fieldReason: err.fieldReason ?? "",
    });
    const metadata = new Headers();
    for (const [key, value] of Object.entries(err.meta)) metadata.set(`whc-meta-${key}`, String(value));
    return new ConnectError(err.message, codeOfReason[err.reason], metadata, [
      { desc: ErrorDetailSchema, value: detail },
    ]);
  }
  // Internal errors keep their text out of the wire; the server logs the original.
  return new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

/** Client side: turns a failed RPC back into the AppError the peer meant. */
export function fromConnectError(err: unknown): AppError {
  if (AppError.is(err)) return err;
  if (err instanceof ConnectError && AppError.is(err.cause)) return err.cause;
  const connectError = ConnectError.from(err);
  const [detail] = connectError.findDetails(ErrorDetailSchema);
  const meta: Record<string, string> = {};
  connectError.metadata.forEach((value, key) => {
    if (key.startsWith("whc-meta-")) meta[key.slice("whc-meta-".length)] = value;
  });
  const reason = (detail?.reason || reasonOfCode[connectError.code] || "internal_error") as ErrorReason;
  return new AppError(reason, connectError.rawMessage, {
    field: detail?.field || undefined,
    fieldReason: (detail?.fieldReason || undefined) as FieldReason | undefined,
    cause: connectError,
    meta,
  });
}
