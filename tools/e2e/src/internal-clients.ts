import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ConnectError, createClient, type Code } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CatalogService, CryptoService, Health, ReplayService } from "@whc/contracts";
import { WORKSPACE_ROOT } from "@whc/testing";

/**
 * What an attacker who reaches an internal port would call (list every account, mint a key for
 * one, fetch the search-index key, use replay's guard), made by clients that are not the
 * services' own: a bare Connect client and a plain @grpc/grpc-js one. Each answers the gRPC
 * code it got.
 */
export type InternalService = "catalog" | "crypto" | "replay";

/** Vetted by replay's guard without a DNS lookup (and refused: loopback); the call itself succeeds. */
const PROBE_TARGET = "http://127.0.0.1/";

function packageOf(file: string): any {
  const def = protoLoader.loadSync(file, { includeDirs: [path.join(WORKSPACE_ROOT, "proto")], enums: String, longs: String });
  return grpc.loadPackageDefinition(def);
}

/** Node's TLS options for a Connect client: its certificate and key, and the CA it trusts. */
export interface ClientTls {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

/** A bare Connect client (gRPC protocol), with `token` as its authorization header when given. */
export async function connectCall(service: InternalService, baseUrl: string, token?: string, tls?: ClientTls): Promise<Code | "ok"> {
  const transport = createGrpcTransport({ baseUrl, ...(tls ? { nodeOptions: { ...tls } } : {}) });
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  try {
    if (service === "catalog") await createClient(CatalogService, transport).listApiKeys({ accountName: "" }, { headers, timeoutMs: 5000 });
    else if (service === "crypto") await createClient(CryptoService, transport).getBlindIndexKey({}, { headers, timeoutMs: 5000 });
    else await createClient(ReplayService, transport).checkForwardTarget({ url: PROBE_TARGET }, { headers, timeoutMs: 5000 });
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

/** The catalog's EnsureApiKey (a key for someone else's account) through a bare Connect client. */
export async function connectMintKey(baseUrl: string, token?: string): Promise<Code | "ok"> {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  try {
    await createClient(CatalogService, createGrpcTransport({ baseUrl })).ensureApiKey(
      { accountName: "victim", keyHash: new Uint8Array(32).fill(7), prefix: "whc_mint" },
      { headers, timeoutMs: 5000 },
    );
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

/** gRPC health `Check("")` through a bare Connect client, no token. */
export async function connectHealth(baseUrl: string, tls?: ClientTls): Promise<string> {
  const transport = createGrpcTransport({ baseUrl, ...(tls ? { nodeOptions: { ...tls } } : {}) });
  const res = await createClient(Health, transport).check({ service: "" }, { timeoutMs: 5000 });
  return res.status === 1 ? "SERVING" : String(res.status);
}

const GRPC_PACKAGES = {
  catalog: ["webhookcapture/catalog/v1/catalog.proto", (p: any) => p.webhookcapture.catalog.v1.CatalogService, "listApiKeys", { accountName: "" }],
  crypto: ["webhookcapture/crypto/v1/crypto.proto", (p: any) => p.webhookcapture.crypto.v1.CryptoService, "getBlindIndexKey", {}],
  replay: ["webhookcapture/replay/v1/replay.proto", (p: any) => p.webhookcapture.replay.v1.ReplayService, "checkForwardTarget", { url: PROBE_TARGET }],
} as const;

function unary(client: grpc.Client, method: string, request: object, token?: string): Promise<grpc.status | "ok"> {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve) => {
    (client as any)[method](request, metadata, { deadline: Date.now() + 5000 }, (err: grpc.ServiceError | null) => resolve(err ? err.code : "ok"));
  });
}

/** A plain @grpc/grpc-js client: the service's attack call, and gRPC health, each with or without a token. */
export function grpcJsClient(service: InternalService, address: string, creds = grpc.credentials.createInsecure()) {
  const [file, ctor, method, request] = GRPC_PACKAGES[service];
  const client = new (ctor(packageOf(file)))(address, creds) as grpc.Client;
  const health = new (packageOf("grpc/health/v1/health.proto").grpc.health.v1.Health)(address, creds) as grpc.Client;
  return {
    call: (token?: string) => unary(client, method, request, token),
    health: () =>
      new Promise<string>((resolve) =>
        (health as any).check({ service: "" }, (err: grpc.ServiceError | null, res: { status: string }) => resolve(err ? `error ${err.code}` : res.status)),
      ),
    close() {
      client.close();
      health.close();
    },
  };
}
