import { describe, it, expect, beforeAll, afterAll } from "vitest";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { create, toBinary } from "@bufbuild/protobuf";
import { CapturedEventsSchema } from "@whc/contracts";
import { buildApps, freePort, startNode, tempDir, WORKSPACE_ROOT, type RunningProcess } from "@whc/testing";

const KEY = `whc_${"k".repeat(40)}`;
const TOKEN = "interop-internal-token-0123456789abcdef";
let proc: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let address: string;

function load(file: string) {
  const def = protoLoader.loadSync(file, {
    includeDirs: [path.join(WORKSPACE_ROOT, "proto")],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
  });
  return grpc.loadPackageDefinition(def);
}

/** A unary call carrying the deployment's internal token as gRPC metadata (`authorization: Bearer ...`), unless `token` is null. */
function unary<Res>(client: grpc.Client, method: string, request: object, token: string | null = TOKEN): Promise<Res> {
  const metadata = new grpc.Metadata();
  if (token !== null) metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (req: object, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: Res) => void) => void>)[method]!(
      request,
      metadata,
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

beforeAll(async () => {
  const { catalog } = buildApps("catalog");
  dir = tempDir();
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  proc = startNode(catalog!, {
    WHC_CATALOG_PORT: String(port),
    WHC_DATA_DIR: dir.path,
    WHC_INTERNAL_TOKEN: TOKEN,
    WHC_BOOTSTRAP_API_KEYS: `interop:${KEY}`,
  });
  await proc.waitForOutput(/catalog ready/);
});

afterAll(async () => {
  await proc.stop();
  dir.remove();
});

describe("a plain @grpc/grpc-js client", () => {
  it("calls the standard health check, without the internal token", async () => {
    const pkg = load("grpc/health/v1/health.proto") as any;
    const client = new pkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
    const res = await unary<{ status: string }>(client, "check", { service: "" }, null);
    expect(res.status).toBe("SERVING");
    const named = await unary<{ status: string }>(client, "check", { service: "webhookcapture.catalog.v1.CatalogService" });
    expect(named.status).toBe("SERVING");
    client.close();
  });

  it("calls catalog RPCs with the token as metadata and gets gRPC status codes for errors; UNAUTHENTICATED without it", async () => {
    const pkg = load("webhookcapture/catalog/v1/catalog.proto") as any;
    const client = new pkg.webhookcapture.catalog.v1.CatalogService(address, grpc.credentials.createInsecure());
    for (const token of [null, "wrong-token-of-the-right-length-000000"]) {
      const refused = await unary(client, "listApiKeys", {}, token).catch((e: grpc.ServiceError) => e);
      expect((refused as grpc.ServiceError).code).toBe(grpc.status.UNAUTHENTICATED);
    }
    const keys = await unary<{ keys: { accountName: string; prefix: string }[] }>(client, "listApiKeys", {});
    expect(keys.keys.map((k) => k.accountName)).toContain("interop");
    const missing = await unary(client, "getEndpoint", { endpointId: "01a20000-0000-7000-8000-000000000000" }).catch(
      (e: grpc.ServiceError) => e,
    );
    expect((missing as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
    const invalid = await unary(client, "getEndpoint", { endpointId: "nope" }).catch((e: grpc.ServiceError) => e);
    expect((invalid as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
    client.close();
  });

  it("appends captures both as messages and as encoded_captures bytes (ADR 0013), and lists them in order", async () => {
    const pkg = load("webhookcapture/catalog/v1/catalog.proto") as any;
    const client = new pkg.webhookcapture.catalog.v1.CatalogService(address, grpc.credentials.createInsecure());
    const { keys } = await unary<{ keys: { accountId: string; accountName: string }[] }>(client, "listApiKeys", {});
    const accountId = keys.find((k) => k.accountName === "interop")!.accountId;
    const { endpoint } = await unary<{ endpoint: { id: string } }>(client, "createEndpoint", {
      endpoint: { accountId, slug: "interop-append", displayName: "interop", operatingMode: "capture", status: "active", provider: "generic", source: "api" },
    });
    const capture = (eventType: string) => ({ accountId, endpointId: endpoint.id, method: "POST", remoteIp: "203.0.113.7", canonicalEventType: eventType, verification: "unverified", responseCode: 200 });
    // `captures` encoded by grpc-js's own protobuf library; `encoded_captures` by protobuf-es, not our codec.
    const encoded = toBinary(CapturedEventsSchema, create(CapturedEventsSchema, { captures: [capture("b.encoded"), capture("c.encoded")] }));
    const { events } = await unary<{ events: { id: string }[] }>(client, "appendEvents", { captures: [capture("a.message")], encodedCaptures: Buffer.from(encoded) });
    expect(events).toHaveLength(3);
    const listed = await unary<{ events: { id: string; canonicalEventType: string; remoteIp: string }[] }>(client, "listEvents", { accountId, endpointId: endpoint.id });
    expect(listed.events.map((e) => e.canonicalEventType)).toEqual(["c.encoded", "b.encoded", "a.message"]);
    expect(listed.events.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
    expect(listed.events.every((e) => e.remoteIp === "203.0.113.7")).toBe(true);
    const refused = await unary(client, "appendEvents", { encodedCaptures: Buffer.from(encoded.subarray(0, 9)) }).catch((e: grpc.ServiceError) => e);
    expect((refused as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
    client.close();
  });
});
