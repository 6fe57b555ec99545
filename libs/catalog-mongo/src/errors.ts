import { MongoError, MongoServerError } from "mongodb";
import { AppError } from "@whc/errors";
import { alertChannelNameTaken } from "@whc/catalog-core";

export function isDuplicate(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

/** The server cannot be reached or the operation may succeed when retried: 503. */
function isTransient(err: MongoError): boolean {
  return (
    err.name === "MongoServerSelectionError" ||
    err.name === "MongoNetworkError" ||
    err.name === "MongoNetworkTimeoutError" ||
    err.name === "MongoNotConnectedError" ||
    err.name === "MongoTopologyClosedError" ||
    err.hasErrorLabel("TransientTransactionError") ||
    err.hasErrorLabel("RetryableWriteError")
  );
}

/**
 * A failure of MongoDB as the AppError callers branch on. Only the error's class goes into
 * the message (the driver's own text can name databases and hosts); the original error is
 * the cause, for logs.
 */
export function translateMongoError(err: unknown, method: string): AppError {
  if (AppError.is(err)) return err;
  const name = err instanceof Error ? err.name : "failure";
  if (err instanceof MongoError && isTransient(err)) return new AppError("service_unavailable", `mongodb: ${name}`, { cause: err });
  if (isDuplicate(err)) {
    // The only unique field an endpoint is given by its caller is its slug (ids are new UUIDs).
    if (method === "createEndpoint") return new AppError("slug_taken", "slug taken", { field: "slug", cause: err });
    // Likewise a channel's name.
    if (method === "createAlertChannel") return alertChannelNameTaken();
    return new AppError("conflict", `mongodb: duplicate key`, { cause: err });
  }
  return new AppError("internal_error", `mongodb: ${name}`, { cause: err });
}
