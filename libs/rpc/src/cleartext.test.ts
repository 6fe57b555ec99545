import { describe, it, expect, afterEach } from "vitest";
import net from "node:net";
import path from "node:path";
import http2 from "node:http2";
import http from "node:http";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createClient, type ConnectRouter } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { CryptoService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { serveH2c, type H2cServer, type ServeOptions } from "./server.js";
import { createPeerTransport, createServiceClient } from "./client.js";
import { healthRoutes } from "./health.js";

/**
 * serveH2c's port speaks both HTTP/2 with prior knowledge (Connect and gRPC clients) and
 * HTTP/1.1 (Prometheus, curl, fetch): each connection's first bytes choose.
 */

const logger = createLogger("test", "silent");
const PROTO_DIR = path.resolve(import.meta.dirname, "../../../proto");
const servers: H2cServer[] = [];
const waiting: (() => void)[] = [];
const held = () => new Promise<void>((resolve) => waiting.push(resolve));
const release = () => waiting.splice(0).forEach((resolve) => resolve());
afterEach(async () => {
  release();
  for (const s of servers.splice(0)) await s.close();
});

const routes = (router: ConnectRouter) => {
  router.service(CryptoService, {
    async getBlindIndexKey() {
      return { key: new Uint8Array([1, 2, 3]) };
    },
    async listMasterKeys() {
      await held();
      return { activeKeyId: "k1", keyIds: ["k1"] };
    },
  });
  healthRoutes({ "": () => true })(router);
};

const versions: string[] = [];
const fallback: NonNullable<ServeOptions["fallback"]> = (req, res) => {
  versions.push(req.httpVersion);
  if (req.url === "/slow") {
    void held().then(() => res.end("late\n"));
    return;
  }
  res.writeHead(req.url === "/metrics" ? 200 : 404, { "content-type": "text/plain" });
  res.end(req.url === "/metrics" ? "whc_up 1\n" : "not found\n");
};

async function start() {
  const server = await serveH2c({ routes, port: 0, host: "127.0.0.1", logger, fallback, credentials: undefined });
  servers.push(server);
  return { server, url: `http://127.0.0.1:${server.port}` };
}

function grpcJsHealth(port: number) {
  const def = protoLoader.loadSync("grpc/health/v1/health.proto", { includeDirs: [PROTO_DIR], enums: String });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const client = new pkg.grpc.health.v1.Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as grpc.Client;
  const check = () =>
    new Promise<string>((resolve, reject) =>
      (client as any).check({ service: "" }, (err: grpc.ServiceError | null, res: { status: string }) => (err ? reject(err) : resolve(res.status))),
    );
  return { check, close: () => client.close() };
}

async function h2Get(url: string, path: string) {
  const session = http2.connect(url);
  try {
    return await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = session.request({ ":path": path });
      let status = 0;
      const chunks: Buffer[] = [];
      req.on("response", (headers) => (status = Number(headers[":status"])));
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString() }));
      req.on("error", reject);
      req.end();
    });
  } finally {
    session.close();
  }
}

/** Writes raw bytes and half-closes, then reads whatever the server says until it closes. */
function raw(port: number, bytes: string | Buffer) {
  return new Promise<Buffer>((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(Buffer.concat(chunks)));
  });
}

describe("serveH2c on one port", () => {
  it("answers a plain fetch (HTTP/1.1) from the fallback where Connect, gRPC and grpc-js clients call over HTTP/2", async () => {
    const { server, url } = await start();
    versions.length = 0;

    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toBe("whc_up 1\n");
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    expect(versions).toEqual(["1.1", "1.1"]);

    const overConnect = createClient(CryptoService, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
    expect([...(await overConnect.getBlindIndexKey({})).key]).toEqual([1, 2, 3]);
    const ours = createServiceClient(CryptoService, createPeerTransport(url, 5000, undefined));
    expect([...(await ours.getBlindIndexKey({})).key]).toEqual([1, 2, 3]);
    const grpcJs = grpcJsHealth(server.port);
    try {
      expect(await grpcJs.check()).toBe("SERVING");
    } finally {
      grpcJs.close();
    }
    expect(await h2Get(url, "/metrics")).toEqual({ status: 200, text: "whc_up 1\n" });
    expect(versions.at(-1)).toBe("2.0");
  });

  it("serves Connect and gRPC-web calls over HTTP/1.1 too, and gRPC with its status in trailers", async () => {
    const { url } = await start();
    for (const transport of [
      createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
      createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }),
    ]) {
      const client = createClient(CryptoService, transport);
      expect([...(await client.getBlindIndexKey({})).key]).toEqual([1, 2, 3]);
    }

    // No gRPC client we know speaks HTTP/1.1; one that did would get a whole answer: an empty
    // HealthCheckRequest in, status SERVING (field 1 = 1) out, grpc-status in the trailers.
    const answer = await new Promise<{ status?: number; type?: string; body: Buffer; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
      const req = http.request(`${url}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/grpc", te: "trailers" },
      });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"], body: Buffer.concat(chunks), trailers: res.trailers }));
      });
      req.on("error", reject);
      req.end(Buffer.from([0, 0, 0, 0, 0]));
    });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/grpc+proto");
    expect([...answer.body]).toEqual([0, 0, 0, 0, 2, 0x08, 1]);
    expect(answer.trailers["grpc-status"]).toBe("0");
  });
});

describe("serveH2c facing odd peers", () => {
  it("survives garbage, a cut-off preface, a broken HTTP/2 session and silent peers, and goes on answering", async () => {
    const { server, url } = await start();
    const silent = net.connect(server.port, "127.0.0.1");
    silent.on("error", () => undefined);
    const silentGone = new Promise((resolve) => silent.on("close", resolve));
    // One that connects, says nothing and leaves.
    await new Promise<void>((resolve) => {
      const leaving = net.connect(server.port, "127.0.0.1", () => leaving.end(resolve));
    });

    const garbage = await raw(server.port, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00]));
    expect(garbage.toString("latin1")).toMatch(/^HTTP\/1\.1 400 /);
    expect((await raw(server.port, "PRI * HTTP/2")).length).toBe(0);
    const brokenH2 = await raw(server.port, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nnot a frame at all");
    expect(brokenH2[3]).toBe(0x04); // answered as HTTP/2 (SETTINGS first), then let go
    const h1 = await raw(server.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(h1.toString()).toContain("whc_up 1");

    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    const ours = createServiceClient(CryptoService, createPeerTransport(url, 5000, undefined));
    expect([...(await ours.getBlindIndexKey({})).key]).toEqual([1, 2, 3]);
    // A peer still silent does not hold the shutdown up: it is dropped, not waited for.
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await silentGone;
  });
});

describe("serveH2c shutting down", () => {
  it("lets calls and requests in flight finish on both protocols, then refuses new connections", async () => {
    const { server, url } = await start();
    const ours = createServiceClient(CryptoService, createPeerTransport(url, 10_000, undefined));
    await ours.getBlindIndexKey({}); // an idle HTTP/2 session stays open
    const idle = await fetch(`${url}/metrics`); // and an idle keep-alive HTTP/1.1 socket
    await idle.text();

    const call = ours.listMasterKeys({});
    const slow = fetch(`${url}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(closed).toBe(false);

    release();
    expect((await call).activeKeyId).toBe("k1");
    expect(await (await slow).text()).toBe("late\n");
    const started = Date.now();
    await closing;
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });
});
