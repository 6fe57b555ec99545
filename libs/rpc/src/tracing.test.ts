import { describe, it, expect, beforeAll, afterAll, afterEach } from "vitest";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ConnectRouter } from "@connectrpc/connect";
import { trace } from "@opentelemetry/api";
import { CryptoService } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { createLogger, requestContext } from "@whc/logging";
import { inSpan, startTracing, type Tracing } from "@whc/telemetry";
import { startOtlpReceiver, waitFor, WORKSPACE_ROOT, type OtlpReceiver, type ReceivedSpan } from "@whc/testing";
import { serveH2c, type H2cServer } from "./server.js";
import { createPeerTransport, createServiceClient } from "./client.js";
import { createInMemoryTransport } from "./in-memory.js";

const logger = createLogger("test", "silent");
let receiver: OtlpReceiver;
let tracing: Tracing;
let server: H2cServer;
let seenTraceId: string | undefined;

const routes = (router: ConnectRouter) => {
  router.service(CryptoService, {
    async getBlindIndexKey() {
      seenTraceId = trace.getActiveSpan()?.spanContext().traceId;
      return { key: new Uint8Array([1]) };
    },
    async openSecret() {
      throw new AppError("not_found", "nothing here");
    },
  });
};

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing("rpc-test", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
  server = await serveH2c({ routes, port: 0, host: "127.0.0.1", logger, credentials: undefined });
});
afterAll(async () => {
  await server.close();
  await tracing.close();
  await receiver.close();
});
afterEach(() => {
  seenTraceId = undefined;
});

/** The spans of one trace once `count` have arrived. */
function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  return waitFor(
    () => {
      const spans = receiver.spans().filter((s) => s.traceId === traceId);
      return spans.length >= count ? spans : undefined;
    },
    { what: `${count} spans of trace ${traceId}` },
  );
}

describe.each([
  ["over a real h2c server", () => createPeerTransport(`http://127.0.0.1:${server.port}`, 5000, undefined)],
  ["in memory (all-in-one)", () => createInMemoryTransport(routes, logger, 5000)],
])("a traced Connect call %s", (_name, transport) => {
  it("is a client span under the caller's span and a server span under it, in the caller's trace", async () => {
    const client = createServiceClient(CryptoService, transport());
    const outer = await requestContext.run({ requestId: "req-7" }, () =>
      inSpan("caller", {}, async (span) => {
        await client.getBlindIndexKey({});
        return span.spanContext();
      }),
    );
    const spans = await spansOf(outer.traceId, 3);
    const name = "webhookcapture.crypto.v1.CryptoService/GetBlindIndexKey";
    const clientSpan = spans.find((s) => s.kind === "client")!;
    const serverSpan = spans.find((s) => s.kind === "server")!;
    expect(clientSpan).toMatchObject({ name, parentSpanId: outer.spanId });
    expect(serverSpan).toMatchObject({ name, parentSpanId: clientSpan.spanId });
    for (const s of [clientSpan, serverSpan]) {
      expect(s.attributes).toMatchObject({ "rpc.system.name": "connectrpc", "rpc.method": name, "whc.request_id": "req-7" });
    }
    expect(seenTraceId).toBe(outer.traceId);
  });

  it("marks both spans failed with the Connect code of a domain error", async () => {
    const client = createServiceClient(CryptoService, transport());
    const outer = await inSpan("caller", {}, async (span) => {
      await client.openSecret({}).catch(() => undefined);
      return span.spanContext();
    });
    const spans = await spansOf(outer.traceId, 3);
    for (const kind of ["client", "server"]) {
      expect(spans.find((s) => s.kind === kind)!.attributes).toMatchObject({ "rpc.status_code": "not_found", "error.type": "not_found" });
    }
  });
});

describe("a plain @grpc/grpc-js client of a traced server", () => {
  it("still calls it, and its traceparent metadata is continued", async () => {
    const def = protoLoader.loadSync(path.join(WORKSPACE_ROOT, "proto/webhookcapture/crypto/v1/crypto.proto"), {
      includeDirs: [path.join(WORKSPACE_ROOT, "proto")],
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      webhookcapture: { crypto: { v1: { CryptoService: new (address: string, creds: grpc.ChannelCredentials) => grpc.Client } } };
    };
    const client = new pkg.webhookcapture.crypto.v1.CryptoService(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", `00-${traceId}-b7ad6b7169203331-01`);
    const key = await new Promise<{ key: Buffer }>((resolve, reject) =>
      (client as unknown as Record<string, (r: object, m: grpc.Metadata, cb: (e: Error | null, res: { key: Buffer }) => void) => void>).getBlindIndexKey!(
        {},
        metadata,
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    client.close();
    expect([...key.key]).toEqual([1]);
    const [span] = await spansOf(traceId, 1);
    expect(span).toMatchObject({ kind: "server", parentSpanId: "b7ad6b7169203331", service: "rpc-test" });
  });
});
