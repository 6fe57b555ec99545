import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ConfigError } from "@whc/config";
import { CryptoService, Health, HealthCheckResponse_ServingStatus } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { createLogger } from "@whc/logging";
import { makeTestCertificates, tempDir, WORKSPACE_ROOT, type TestCertificate } from "@whc/testing";
import { serveH2c, type H2cServer } from "./server.js";
import { createPeerTransport, createServiceClient } from "./client.js";
import { healthRoutes } from "./health.js";
import { checkInternalUrl, loadInternalCredentials, type InternalCredentials, type InternalTls } from "./credentials.js";

/**
 * Every internal call carries the deployment's token (and, with mutual TLS, a certificate
 * signed by its CA); health checks pass without one. Real servers on loopback, real clients:
 * ours, a bare Connect client, and a plain @grpc/grpc-js one.
 */
const logger = createLogger("test", "silent");
const TOKEN = "t".repeat(40);
const WRONG = "w".repeat(40);
const dir = tempDir("whc-credentials-");
let certs: { good: TestCertificate; stranger: TestCertificate };

const routes = (router: ConnectRouter) => {
  router.service(CryptoService, {
    async getBlindIndexKey() {
      return { key: new Uint8Array([4, 2]) };
    },
  });
  healthRoutes({ "": () => true })(router);
};

const tlsOf = (c: TestCertificate, ca = c.ca): InternalTls => ({ cert: readFileSync(c.cert), key: readFileSync(c.key), ca: readFileSync(ca) });

const servers: H2cServer[] = [];
async function serve(credentials: InternalCredentials) {
  const server = await serveH2c({ routes, port: 0, host: "127.0.0.1", logger, credentials });
  servers.push(server);
  return server;
}

beforeAll(() => {
  certs = makeTestCertificates(dir.path);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  dir.remove();
});

function grpcJs(port: number, creds: grpc.ChannelCredentials) {
  const load = (file: string) =>
    grpc.loadPackageDefinition(protoLoader.loadSync(file, { includeDirs: [path.join(WORKSPACE_ROOT, "proto")], enums: String })) as any;
  const crypto = new (load("webhookcapture/crypto/v1/crypto.proto").webhookcapture.crypto.v1.CryptoService)(`127.0.0.1:${port}`, creds) as grpc.Client;
  const health = new (load("grpc/health/v1/health.proto").grpc.health.v1.Health)(`127.0.0.1:${port}`, creds) as grpc.Client;
  const call = <T>(client: grpc.Client, method: string, request: object, token?: string) =>
    new Promise<T>((resolve, reject) => {
      const metadata = new grpc.Metadata();
      if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
      (client as any)[method](request, metadata, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
    });
  return {
    key: (token?: string) => call<{ key: Buffer }>(crypto, "getBlindIndexKey", {}, token),
    health: (token?: string) => call<{ status: string }>(health, "check", { service: "" }, token),
    close() {
      crypto.close();
      health.close();
    },
  };
}

const codeOf = (err: unknown) => (err as grpc.ServiceError).code;

describe("the internal token", () => {
  it("is required of every call but health checks, checked for Connect, gRPC and grpc-js clients alike", async () => {
    const server = await serve({ token: TOKEN });
    const url = `http://127.0.0.1:${server.port}`;

    const bare = createClient(CryptoService, createGrpcTransport({ baseUrl: url }));
    const refused = await bare.getBlindIndexKey({}).catch((e: unknown) => ConnectError.from(e));
    expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
    expect((refused as ConnectError).rawMessage).not.toContain(TOKEN);
    const bareHealth = createClient(Health, createGrpcTransport({ baseUrl: url }));
    expect((await bareHealth.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);

    // Connect's own protocol over HTTP/1.1, on the same port: refused the same way.
    const h1 = await fetch(`${url}/${CryptoService.typeName}/GetBlindIndexKey`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(h1.status).toBe(401);
    expect(await h1.json()).toMatchObject({ code: "unauthenticated" });

    const ours = createServiceClient(CryptoService, createPeerTransport(url, 5000, { token: TOKEN }));
    expect([...(await ours.getBlindIndexKey({})).key]).toEqual([4, 2]);
    // A peer holding another token: the caller sees its peer unavailable, not its user unauthorized.
    const wrong = createServiceClient(CryptoService, createPeerTransport(url, 5000, { token: WRONG }));
    expect(((await wrong.getBlindIndexKey({}).catch((e: unknown) => e)) as AppError).reason).toBe("service_unavailable");
    const wrongHealth = createServiceClient(Health, createPeerTransport(url, 5000, { token: WRONG }));
    expect(((await wrongHealth.check({ service: "" }).catch((e: unknown) => e)) as AppError).reason).toBe("service_unavailable");

    const plain = grpcJs(server.port, grpc.credentials.createInsecure());
    try {
      expect(codeOf(await plain.key().catch((e: unknown) => e))).toBe(grpc.status.UNAUTHENTICATED);
      expect(codeOf(await plain.key(WRONG).catch((e: unknown) => e))).toBe(grpc.status.UNAUTHENTICATED);
      expect(codeOf(await plain.key(TOKEN.slice(1)).catch((e: unknown) => e))).toBe(grpc.status.UNAUTHENTICATED);
      expect([...(await plain.key(TOKEN)).key]).toEqual([4, 2]);
      expect((await plain.health()).status).toBe("SERVING");
      expect(codeOf(await plain.health(WRONG).catch((e: unknown) => e))).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      plain.close();
    }
  });
});

describe("a service's own UNAUTHENTICATED", () => {
  it("reaches the caller as it is (a user's key refused), not as the peer being unavailable", async () => {
    const server = await serveH2c({
      routes: (router) =>
        router.service(CryptoService, {
          async getBlindIndexKey() {
            throw new AppError("unauthorized", "unknown or revoked key");
          },
        }),
      port: 0,
      host: "127.0.0.1",
      logger,
      credentials: { token: TOKEN },
    });
    servers.push(server);
    const ours = createServiceClient(CryptoService, createPeerTransport(`http://127.0.0.1:${server.port}`, 5000, { token: TOKEN }));
    expect(((await ours.getBlindIndexKey({}).catch((e: unknown) => e)) as AppError).reason).toBe("unauthorized");
  });
});

describe("mutual TLS", () => {
  it("serves only clients with a certificate of the deployment's CA, and still wants the token", async () => {
    const server = await serve({ token: TOKEN, tls: tlsOf(certs.good) });
    const url = `https://127.0.0.1:${server.port}`;
    const ours = createServiceClient(CryptoService, createPeerTransport(url, 5000, { token: TOKEN, tls: tlsOf(certs.good) }));
    expect([...(await ours.getBlindIndexKey({})).key]).toEqual([4, 2]);

    // Its certificate from another CA (the server's still checked against the right one): no session.
    const stranger = createServiceClient(CryptoService, createPeerTransport(url, 5000, { token: TOKEN, tls: tlsOf(certs.stranger, certs.good.ca) }));
    expect(((await stranger.getBlindIndexKey({}).catch((e: unknown) => e)) as AppError).reason).toBe("service_unavailable");
    // Cleartext to a TLS port: no answer either.
    const cleartext = createServiceClient(CryptoService, createPeerTransport(`http://127.0.0.1:${server.port}`, 2000, { token: TOKEN }));
    expect(AppError.is(await cleartext.getBlindIndexKey({}).catch((e: unknown) => e))).toBe(true);

    const ca = readFileSync(certs.good.ca);
    const noCert = grpcJs(server.port, grpc.credentials.createSsl(ca));
    const wrongCa = grpcJs(server.port, grpc.credentials.createSsl(ca, readFileSync(certs.stranger.key), readFileSync(certs.stranger.cert)));
    const right = grpcJs(server.port, grpc.credentials.createSsl(ca, readFileSync(certs.good.key), readFileSync(certs.good.cert)));
    try {
      expect(codeOf(await noCert.key(TOKEN).catch((e: unknown) => e))).toBe(grpc.status.UNAVAILABLE);
      expect(codeOf(await wrongCa.key(TOKEN).catch((e: unknown) => e))).toBe(grpc.status.UNAVAILABLE);
      expect(codeOf(await right.key().catch((e: unknown) => e))).toBe(grpc.status.UNAUTHENTICATED);
      expect([...(await right.key(TOKEN)).key]).toEqual([4, 2]);
      expect((await right.health()).status).toBe("SERVING");
    } finally {
      for (const c of [noCert, wrongCa, right]) c.close();
    }
  });
});

describe("loadInternalCredentials", () => {
  const refusal = (settings: Parameters<typeof loadInternalCredentials>[0], now?: Date) => {
    try {
      loadInternalCredentials(settings, now);
    } catch (err) {
      if (ConfigError.is(err)) return err;
      throw err;
    }
    throw new Error("accepted");
  };
  const none = { internalToken: TOKEN, internalTlsCert: undefined, internalTlsKey: undefined, internalTlsCa: undefined };
  const all = () => ({ internalToken: TOKEN, internalTlsCert: certs.good.cert, internalTlsKey: certs.good.key, internalTlsCa: certs.good.ca });

  it("reads the token alone, or the token and all three TLS files", () => {
    expect(loadInternalCredentials(none)).toEqual({ token: TOKEN });
    expect(loadInternalCredentials(all()).tls?.cert.toString()).toContain("BEGIN CERTIFICATE");
  });

  it.each([
    ["no token", () => ({ ...none, internalToken: undefined }), "WHC_INTERNAL_TOKEN"],
    ["a certificate alone", () => ({ ...none, internalTlsCert: certs.good.cert }), "WHC_INTERNAL_TLS_KEY"],
    ["no CA", () => ({ ...all(), internalTlsCa: undefined }), "WHC_INTERNAL_TLS_CA"],
    ["a missing file", () => ({ ...all(), internalTlsCa: path.join(dir.path, "nope.crt") }), "WHC_INTERNAL_TLS_CA"],
    ["a key that is not PEM", () => ({ ...all(), internalTlsKey: path.join(dir.path, "internal.ext") }), "WHC_INTERNAL_TLS_KEY"],
    ["a certificate of another CA", () => ({ ...all(), internalTlsCert: certs.stranger.cert, internalTlsKey: certs.stranger.key }), "WHC_INTERNAL_TLS_CERT"],
    ["a key of another certificate", () => ({ ...all(), internalTlsKey: certs.stranger.key }), "WHC_INTERNAL_TLS_KEY"],
    ["a CA file holding a key", () => ({ ...all(), internalTlsCa: certs.good.key }), "WHC_INTERNAL_TLS_CA"],
  ])("stops start-up on %s, naming the variable in one line", (_what, settings, variable) => {
    const err = refusal(settings());
    expect(err.variable).toBe(variable);
    expect(err.message).not.toContain("\n");
    expect(err.message).not.toContain(TOKEN);
  });

  it("refuses a certificate past its dates", () => {
    expect(refusal(all(), new Date(Date.now() + 30 * 86_400_000)).variable).toBe("WHC_INTERNAL_TLS_CERT");
  });

  it("holds every internal URL to the transport: https: with TLS, http: without", () => {
    const tls = loadInternalCredentials(all());
    expect(() => checkInternalUrl("WHC_CATALOG_URL", "https://catalog:50051", tls)).not.toThrow();
    expect(() => checkInternalUrl("WHC_CATALOG_URL", "http://catalog:50051", tls)).toThrow(/WHC_CATALOG_URL must be an https: URL/);
    expect(() => checkInternalUrl("WHC_CRYPTO_URL", "https://crypto:50052", { token: TOKEN })).toThrow(/WHC_CRYPTO_URL must be an http: URL/);
  });
});
