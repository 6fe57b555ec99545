import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import { Code } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { makeTestCertificates, tempDir, type TestCertificate } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";
import { connectCall, connectHealth, grpcJsClient, type ClientTls, type InternalService } from "./internal-clients.js";

/**
 * The distributed services with mutual TLS on (certificates made here, at test time): they
 * work together over https:, and a client whose certificate another CA signed gets no TLS
 * session at all, token or not.
 */
const INTERNAL: InternalService[] = ["catalog", "crypto", "replay"];
const dir = tempDir("whc-e2e-tls-");
let certs: { good: TestCertificate; stranger: TestCertificate };
let cluster: Cluster;

const tlsOf = (c: TestCertificate, ca: string): ClientTls => ({ cert: readFileSync(c.cert), key: readFileSync(c.key), ca: readFileSync(ca) });
const hostPort = (url: string) => new URL(url).host;

/** A bare TLS 1.2 handshake (ALPN h2) with `tls`: "ok", or the error code it ended with. */
function handshake(url: string, tls: ClientTls): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ...tls, ALPNProtocols: ["h2"], maxVersion: "TLSv1.2" });
    socket.once("secureConnect", () => {
      socket.destroy();
      resolve("ok");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

beforeAll(async () => {
  certs = makeTestCertificates(dir.path);
  cluster = await startCluster({
    WHC_INTERNAL_TLS_CERT: certs.good.cert,
    WHC_INTERNAL_TLS_KEY: certs.good.key,
    WHC_INTERNAL_TLS_CA: certs.good.ca,
  });
});
afterAll(async () => {
  await cluster?.shutdown();
  dir.remove();
});

describe("distributed services over mutual TLS", () => {
  it("work as one system: a capture through ingest is listed through the gateway", async () => {
    expect(Object.values(cluster.internalUrls).every((u) => u.startsWith("https://"))).toBe(true);
    const ep = (await cluster.api.post("/v1/endpoints", { slug: "over-tls" })).body as { id: string; webhookUrl: string };
    const sent = await fetch(`${ep.webhookUrl}/ci`, { method: "POST", body: "sealed and sent over mutual TLS" });
    expect(sent.status).toBe(200);
    const { id } = (await sent.json()) as { id: string };
    const listed = await cluster.api.get(`/v1/endpoints/${ep.id}/events`);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toEqual([id]);
    expect((await cluster.api.get(`/v1/endpoints/${ep.id}/events/${id}`)).body.body).toBe("sealed and sent over mutual TLS");
    expect((await fetch(`${cluster.gatewayUrl}/readyz`)).status).toBe(200);
  });

  it.each(INTERNAL)("refuse the TLS session to a client whose certificate another CA signed (%s), token or not", async (service) => {
    const url = cluster.internalUrls[service];
    const stranger = tlsOf(certs.stranger, certs.good.ca);
    // The handshake itself fails (TLS 1.2, where the server judges the client's certificate
    // before the handshake ends: it drops the connection); the right certificate completes it.
    expect(await handshake(url, stranger)).toMatch(/^(ECONNRESET|ERR_SSL_\w+)$/);
    expect(await handshake(url, tlsOf(certs.good, certs.good.ca))).toBe("ok");
    // Under TLS 1.3 the client's side ends first, and the refusal reaches a Connect client as a
    // transport failure (Unavailable, Canceled or Aborted, by timing): never an answer of the service.
    const viaConnect = await connectCall(service, url, cluster.credentials.token, stranger);
    expect([Code.Unavailable, Code.Canceled, Code.Aborted]).toContain(viaConnect);
    const ca = readFileSync(certs.good.ca);
    const viaGrpcJs = grpcJsClient(service, hostPort(url), grpc.credentials.createSsl(ca, readFileSync(certs.stranger.key), readFileSync(certs.stranger.cert)));
    const withoutCert = grpcJsClient(service, hostPort(url), grpc.credentials.createSsl(ca));
    const cleartext = grpcJsClient(service, hostPort(url));
    try {
      expect(await viaGrpcJs.call(cluster.credentials.token)).toBe(grpc.status.UNAVAILABLE);
      expect(await viaGrpcJs.health()).toBe(`error ${grpc.status.UNAVAILABLE}`);
      expect(await withoutCert.call(cluster.credentials.token)).toBe(grpc.status.UNAVAILABLE);
      expect(await cleartext.call(cluster.credentials.token)).toBe(grpc.status.UNAVAILABLE);
    } finally {
      for (const c of [viaGrpcJs, withoutCert, cleartext]) c.close();
    }
  });

  it.each(INTERNAL)("still want the token from a client with the right certificate (%s), and answer health without it", async (service) => {
    const url = cluster.internalUrls[service];
    const right = tlsOf(certs.good, certs.good.ca);
    expect(await connectCall(service, url, undefined, right)).toBe(Code.Unauthenticated);
    expect(await connectCall(service, url, cluster.credentials.token, right)).toBe("ok");
    expect(await connectHealth(url, right)).toBe("SERVING");
    const viaGrpcJs = grpcJsClient(service, hostPort(url), grpc.credentials.createSsl(right.ca, right.key, right.cert));
    try {
      expect(await viaGrpcJs.call()).toBe(grpc.status.UNAUTHENTICATED);
      expect(await viaGrpcJs.call(cluster.credentials.token)).toBe("ok");
      expect(await viaGrpcJs.health()).toBe("SERVING");
    } finally {
      viaGrpcJs.close();
    }
  });
});
