export { AppError, notFound, validationFailed, unavailable } from "./app-error.js";
export type { ErrorReason, FieldReason, AppErrorOptions } from "./app-error.js";
export { toConnectError, fromConnectError } from "./connect.js";
