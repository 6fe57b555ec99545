import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync, statSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Code } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { CatalogService } from "@whc/contracts";
import { createPeerTransport, createServiceClient } from "@whc/rpc";
import { buildApps, freePort, startNode, tempDir } from "@whc/testing";
import { SERVICES, startCluster, type Cluster } from "./cluster.js";
import { connectCall, connectHealth, connectMintKey, grpcJsClient, type InternalService } from "./internal-clients.js";

/**
 * The distributed services' internal ports, as an attacker on the network meets them: without
 * the deployment's token nothing but a health check answers; with the wrong one nothing at all.
 * And they listen on loopback unless told otherwise.
 */
let cluster: Cluster;
const INTERNAL: InternalService[] = ["catalog", "crypto", "replay"];
const WRONG = "0123456789abcdef".repeat(4);

beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.shutdown();
});

const hostPort = (url: string) => new URL(url).host;

/**
 * The local addresses a TCP port is listened on, read from the kernel's tables (Linux): what
 * the listener is bound to, whatever answers a connection from here.
 */
function listenAddresses(port: number): string[] {
  const found: string[] = [];
  for (const [file, v6] of [["/proc/net/tcp", false], ["/proc/net/tcp6", true]] as const) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== "0A" || !local) continue; // 0A: LISTEN
      const [hex, portHex] = local.split(":");
      if (parseInt(portHex!, 16) !== port) continue;
      if (!v6) {
        found.push(Buffer.from(hex!, "hex").reverse().join("."));
      } else {
        // Four 32-bit words, each little-endian.
        const words = hex!.match(/.{8}/g)!.map((w) => Buffer.from(w, "hex").reverse().toString("hex"));
        found.push(words.join("").match(/.{4}/g)!.join(":"));
      }
    }
  }
  return found;
}

/** This machine's first non-loopback IPv4 address, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
}

function refusesConnection(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true);
    });
  });
}

describe("internal calls without the deployment's token", () => {
  it.each(INTERNAL)("are UNAUTHENTICATED at the %s, from a Connect client, without a token and with a wrong one", async (service) => {
    const url = cluster.internalUrls[service];
    expect(await connectCall(service, url)).toBe(Code.Unauthenticated);
    expect(await connectCall(service, url, WRONG)).toBe(Code.Unauthenticated);
    expect(await connectCall(service, url, cluster.credentials.token)).toBe("ok");
  });

  it.each(INTERNAL)("are UNAUTHENTICATED at the %s, from a plain @grpc/grpc-js client, which calls it with the token as metadata", async (service) => {
    const client = grpcJsClient(service, hostPort(cluster.internalUrls[service]));
    try {
      expect(await client.call()).toBe(grpc.status.UNAUTHENTICATED);
      expect(await client.call(WRONG)).toBe(grpc.status.UNAUTHENTICATED);
      expect(await client.call(cluster.credentials.token)).toBe("ok");
    } finally {
      client.close();
    }
  });

  it("mint no API key for another account", async () => {
    expect(await connectMintKey(cluster.internalUrls.catalog)).toBe(Code.Unauthenticated);
    expect(await connectMintKey(cluster.internalUrls.catalog, WRONG)).toBe(Code.Unauthenticated);
    const catalog = createServiceClient(CatalogService, createPeerTransport(cluster.internalUrls.catalog, 5000, cluster.credentials));
    const { keys } = await catalog.listApiKeys({ accountName: "" });
    expect(keys.map((k) => k.accountName)).not.toContain("victim");
    expect(keys.length).toBeGreaterThan(0);
  });

  it.each(INTERNAL)("still get the %s's gRPC health answered (probes carry no token)", async (service) => {
    expect(await connectHealth(cluster.internalUrls[service])).toBe("SERVING");
    const client = grpcJsClient(service, hostPort(cluster.internalUrls[service]));
    try {
      expect(await client.health()).toBe("SERVING");
    } finally {
      client.close();
    }
  });
});

describe("internal listeners", () => {
  it("listen on loopback only by default: the internal ports and every metrics port", async () => {
    const ports = [
      ...INTERNAL.map((s) => Number(new URL(cluster.internalUrls[s]).port)),
      ...SERVICES.map((s) => Number(new URL(cluster.metricsUrls[s]).port)),
    ];
    for (const port of ports) expect(listenAddresses(port), `port ${port}`).toEqual(["127.0.0.1"]);
    const outside = outsideAddress();
    if (outside) {
      for (const port of ports) expect(await refusesConnection(outside, port), `${outside}:${port}`).toBe(true);
    }
    // The public ones follow WHC_HOST (the cluster's 127.0.0.1 here): they are served.
    expect((await fetch(`${cluster.gatewayUrl}/healthz`)).status).toBe(200);
  });

  it("are not moved by WHC_HOST, which binds only the public listeners", async () => {
    const extra = await cluster.extra("catalog", { WHC_HOST: "0.0.0.0" });
    try {
      expect(listenAddresses(Number(new URL(extra.url).port))).toEqual(["127.0.0.1"]);
    } finally {
      await extra.proc.stop();
    }
  });

  it("serve no /metrics on the public ports", async () => {
    expect((await fetch(`${cluster.gatewayUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${cluster.ingestUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${cluster.metricsUrls.ingest}/metrics`)).status).toBe(200);
  });
});

describe("a distributed service started without WHC_INTERNAL_TOKEN", () => {
  it.each(SERVICES)("%s exits 1 with one line naming the variable", async (service) => {
    const { [service]: main } = buildApps(service);
    const dir = tempDir("whc-e2e-no-token-");
    try {
      const proc = startNode(main!, { WHC_DATA_DIR: dir.path, WHC_HOST: "127.0.0.1", [`WHC_${service.toUpperCase()}_PORT`]: String(await freePort()) });
      const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
      const lines = proc.output().trim().split("\n");
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^${service}: configuration error: WHC_INTERNAL_TOKEN must be set`));
    } finally {
      dir.remove();
    }
  });
});

describe("whc keys create --account against a distributed catalog", () => {
  it("calls it with WHC_INTERNAL_TOKEN from the environment, and says which variable is missing without it", async () => {
    const { whc } = buildApps("whc");
    // An account's first key is the one thing whc makes in the catalog itself (design §15).
    const run = async (env: Record<string, string>) => {
      const proc = startNode(whc!, { WHC_CATALOG_URL: cluster.internalUrls.catalog, ...env }, ["keys", "create", "--account", "first-over-h2c", "--json"]);
      const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
      return { code, output: proc.output() };
    };
    const created = await run({ WHC_INTERNAL_TOKEN: cluster.credentials.token });
    expect(created.code, created.output).toBe(0);
    expect(JSON.parse(created.output)).toMatchObject({ account: "first-over-h2c", key: expect.stringMatching(/^whc_/), scopes: ["*"] });
    const refused = await run({});
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("WHC_INTERNAL_TOKEN must be set");
    expect((await run({ WHC_INTERNAL_TOKEN: WRONG })).code).toBe(4);
  });
});

describe("the distributed services' data files", () => {
  it("are private: the catalog and its -wal and -shm, and crypto's key ring, 0600", () => {
    const dataDir = cluster.env.WHC_DATA_DIR!;
    const catalogFiles = cluster.env.WHC_MONGODB_URI ? [] : ["catalog.db", "catalog.db-wal", "catalog.db-shm"];
    for (const file of [...catalogFiles, "keyring.json"]) {
      expect((statSync(path.join(dataDir, file)).mode & 0o777).toString(8), file).toBe("600");
    }
  });
});
