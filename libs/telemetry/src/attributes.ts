/**
 * The OpenTelemetry semantic-convention attribute names the services set, as the
 * @opentelemetry/semantic-conventions package spells them. Written here rather than imported:
 * loading that package costs every process about 8 MiB of resident memory, tracing on or off
 * (measured with `node -e`), for a dozen strings. attributes.test.ts checks each against the
 * package.
 */
export const ATTR_DB_OPERATION_BATCH_SIZE = "db.operation.batch.size";
export const ATTR_DB_OPERATION_NAME = "db.operation.name";
export const ATTR_DB_SYSTEM_NAME = "db.system.name";
export const ATTR_ERROR_TYPE = "error.type";
export const ATTR_HTTP_REQUEST_METHOD = "http.request.method";
export const ATTR_HTTP_RESPONSE_STATUS_CODE = "http.response.status_code";
export const ATTR_HTTP_ROUTE = "http.route";
export const ATTR_RPC_METHOD = "rpc.method";
export const ATTR_RPC_STATUS_CODE = "rpc.status_code";
export const ATTR_RPC_SYSTEM_NAME = "rpc.system.name";
export const ATTR_SERVICE_NAME = "service.name";
export const ATTR_URL_PATH = "url.path";
