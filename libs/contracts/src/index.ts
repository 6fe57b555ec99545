export * from "./gen/grpc/health/v1/health_pb.js";
export * from "./gen/webhookcapture/common/v1/common_pb.js";
export * from "./gen/webhookcapture/catalog/v1/catalog_pb.js";
export * from "./gen/webhookcapture/crypto/v1/crypto_pb.js";
export * from "./gen/webhookcapture/replay/v1/replay_pb.js";
export * from "./captured-events.js";
export * from "./appended-events.js";
