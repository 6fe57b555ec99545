import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { CleartextHandler, CleartextListener } from "./cleartext-listener.js";
import { tlsServerOptions, type InternalTls } from "./credentials.js";

/**
 * HTTP/2 over mutual TLS: a peer without a certificate signed by the CA never gets a session.
 * HTTP/2 only (ALPN h2): every internal client speaks it, and metrics are on their own port.
 */
export async function listenTls(handler: CleartextHandler, port: number, host: string, tls: InternalTls): Promise<CleartextListener> {
  const server = http2.createSecureServer({ ...tlsServerOptions(tls), allowHTTP1: false }, handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  // A refused handshake (no certificate, a wrong CA) only ends that connection.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Peers stop opening streams; in-flight ones finish, idle sessions end.
        for (const session of sessions) session.close();
      }),
  };
}
