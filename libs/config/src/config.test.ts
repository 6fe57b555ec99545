import { describe, it, expect, expectTypeOf } from "vitest";
import { ConfigError, loadConfig, type ConfigOf } from "./config.js";
import { settings } from "./settings.js";

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

const KEY = `whc_${"a".repeat(32)}`;
const KEY_32 = Buffer.alloc(32, 7).toString("base64");

/** The error `loadConfig(settings, env)` throws, which must be one line naming `name`. */
function refusal(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(settings, env);
  } catch (err) {
    if (ConfigError.is(err)) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe("loadConfig", () => {
  const spec = {
    port: settings.gatewayPort,
    allowPrivate: settings.replayAllowPrivateTargets,
    keys: settings.bootstrapApiKeys,
    publicUrl: settings.ingestPublicUrl,
  };

  it("applies the documented defaults", () => {
    const c = loadConfig(spec, {});
    expect(c).toEqual({ port: 8080, allowPrivate: false, keys: [], publicUrl: "http://localhost:8081" });
  });

  it("loads every setting from an empty environment", () => {
    const c = loadConfig(settings, {});
    expect(c.host).toBe("0.0.0.0");
    expect(c.mongodbWriteConcern).toBe("majority");
    expect(c.trustedProxies).toEqual([]);
    expect(c.masterKeys).toEqual([]);
    expect(c.mongodbUri).toBeUndefined();
    expect(c.natsUrl).toBeUndefined();
    expect(c.blindIndexKey).toBeUndefined();
  });

  it("types a setting with a default as present, one without as optional", () => {
    const c = loadConfig(settings, {});
    expectTypeOf(c.catalogUrl).toEqualTypeOf<string>();
    expectTypeOf(c.ingestPublicUrl).toEqualTypeOf<string>();
    expectTypeOf(c.host).toEqualTypeOf<string>();
    expectTypeOf(c.dataDir).toEqualTypeOf<string>();
    expectTypeOf(c.gatewayPort).toEqualTypeOf<number>();
    expectTypeOf(c.trustedProxies).toEqualTypeOf<string[]>();
    // expect-type reads `${number}` as string, so this one is compared by hand. Narrower than
    // string, yet what the store's `writeConcern?: string` takes.
    expectTypeOf<Same<typeof c.mongodbWriteConcern, "majority" | `${number}`>>().toEqualTypeOf<true>();
    expectTypeOf(c.mongodbWriteConcern).toExtend<string>();
    expectTypeOf(c.mongodbUri).toEqualTypeOf<string | undefined>();
    expectTypeOf(c.natsUrl).toEqualTypeOf<string | undefined>();
    expectTypeOf(c.blindIndexKey).toEqualTypeOf<string | undefined>();
    expectTypeOf<ConfigOf<{ u: typeof settings.replayUrl }>>().toEqualTypeOf<{ readonly u: string }>();
  });

  it("parses the values given", () => {
    const c = loadConfig(spec, {
      WHC_GATEWAY_PORT: "9000",
      WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
      WHC_BOOTSTRAP_API_KEYS: `acct-a:${KEY}, acct-b:${KEY}b`,
      WHC_INGEST_PUBLIC_URL: "https://hooks.example.test/",
    });
    expect(c.port).toBe(9000);
    expect(c.allowPrivate).toBe(true);
    expect(c.keys).toEqual([
      { name: "acct-a", value: KEY },
      { name: "acct-b", value: `${KEY}b` },
    ]);
    expect(c.publicUrl).toBe("https://hooks.example.test");
  });

  it.each([
    ["WHC_HOST", "127.0.0.1"],
    ["WHC_HOST", "::"],
    ["WHC_HOST", "catalog.internal"],
    ["WHC_HOST", "my_service"],
    ["WHC_MONGODB_URI", "mongodb://a:1,b:2/whc?replicaSet=rs0"],
    ["WHC_MONGODB_URI", "mongodb+srv://user:p%40ss@cluster.example.net/whc"],
    ["WHC_MONGODB_WRITE_CONCERN", "majority"],
    ["WHC_MONGODB_WRITE_CONCERN", "0"],
    ["WHC_MONGODB_WRITE_CONCERN", "3"],
    ["WHC_NATS_URL", "nats://nats:4222"],
    ["WHC_NATS_URL", "tls://nats.example.net"],
    ["WHC_NATS_URL", "127.0.0.1:4222"],
    ["WHC_NATS_URL", "nats://[::1]:4222"],
    ["WHC_TRUSTED_PROXIES", "198.51.100.1, 2001:db8::1"],
    ["WHC_BLIND_INDEX_KEY", KEY_32],
    ["WHC_BLIND_INDEX_KEY", KEY_32.replace(/=$/, "")],
    ["WHC_MASTER_KEYS", `new:${KEY_32},old:${KEY_32}`],
    ["WHC_DATA_DIR", "/var/lib/whc"],
    ["WHC_DASHBOARD_DIR", "dist/dashboard"],
    ["WHC_INTERNAL_HOST", "0.0.0.0"],
    ["WHC_INTERNAL_TOKEN", "a".repeat(32)],
    ["WHC_METRICS_PORT", "0"],
    ["WHC_CATALOG_URL", "https://catalog:50051"],
  ])("accepts %s=%s", (name, value) => {
    expect(() => loadConfig(settings, { [name]: value })).not.toThrow();
  });

  it("hands ingest the trusted proxies in the form it compares peers in", () => {
    const c = loadConfig(settings, { WHC_TRUSTED_PROXIES: " 198.51.100.1,2001:DB8:0:0:0:0:0:1,, ::ffff:192.0.2.7 " });
    expect(c.trustedProxies).toEqual(["198.51.100.1", "2001:db8::1", "192.0.2.7"]);
  });

  it("keeps the write concern as the text the store takes", () => {
    expect(loadConfig(settings, { WHC_MONGODB_WRITE_CONCERN: "02" }).mongodbWriteConcern).toBe("2");
  });

  it("reads a blank optional variable as unset (compose's ${X:-})", () => {
    const c = loadConfig(settings, { WHC_MONGODB_URI: "", WHC_NATS_URL: " ", WHC_MASTER_KEYS: "", WHC_GATEWAY_PORT: "" });
    expect(c.mongodbUri).toBeUndefined();
    expect(c.natsUrl).toBeUndefined();
    expect(c.masterKeys).toEqual([]);
    expect(c.gatewayPort).toBe(8080);
  });

  it.each([
    ["WHC_GATEWAY_PORT", "eighty"],
    ["WHC_GATEWAY_PORT", "70000"],
    ["WHC_REPLAY_ALLOW_PRIVATE_TARGETS", "maybe"],
    ["WHC_BOOTSTRAP_API_KEYS", "acct:short"],
    ["WHC_INGEST_PUBLIC_URL", "ftp://x"],
    ["WHC_CATALOG_URL", "not a url"],
    ["WHC_MONGODB_WRITE_CONCERN", "all"],
    ["WHC_MONGODB_WRITE_CONCERN", "-1"],
    ["WHC_MONGODB_WRITE_CONCERN", "1.5"],
    ["WHC_TRUSTED_PROXIES", "198.51.100.0/24"],
    ["WHC_TRUSTED_PROXIES", "198.51.100.1,proxy.internal"],
    ["WHC_TRUSTED_PROXIES", "198.51.100.256"],
    ["WHC_HOST", "999.1.1.1"],
    ["WHC_HOST", "http://0.0.0.0"],
    ["WHC_HOST", "-bad.example"],
    ["WHC_HOST", "[::1]"],
    ["WHC_MONGODB_URI", "postgres://db/whc"],
    ["WHC_MONGODB_URI", "mongodb://"],
    ["WHC_NATS_URL", "http://nats:4222"],
    ["WHC_NATS_URL", "nats://a:4222,nats://b:4222"],
    ["WHC_NATS_URL", "nats://user:pass@nats:4222"],
    ["WHC_NATS_URL", "nats://nats:99999"],
    ["WHC_BLIND_INDEX_KEY", Buffer.alloc(31).toString("base64")],
    ["WHC_BLIND_INDEX_KEY", Buffer.alloc(33).toString("base64")],
    ["WHC_BLIND_INDEX_KEY", Buffer.alloc(32, 255).toString("base64url")],
    ["WHC_MASTER_KEYS", `k1:${Buffer.alloc(33).toString("base64")}`],
    ["WHC_MASTER_KEYS", `k1:${KEY_32},k1:${KEY_32}`],
    ["WHC_DATA_DIR", ""],
    ["WHC_DATA_DIR", "   "],
    ["WHC_DASHBOARD_DIR", ""],
    ["WHC_INTERNAL_HOST", "http://127.0.0.1"],
    ["WHC_METRICS_PORT", "-1"],
    ["WHC_INTERNAL_TOKEN", "too-short"],
    ["WHC_INTERNAL_TOKEN", `${"a".repeat(20)} ${"b".repeat(20)}`],
    ["WHC_INGEST_PORT", "x"],
  ])("stops on %s=%j with one line naming it", (name, value) => {
    const error = refusal({ [name]: value });
    expect(error.variable).toBe(name);
    expect(error.message).toContain(name);
    expect(error.message).not.toContain("\n");
  });

  it("binds internal listeners on loopback and public ones on every interface by default", () => {
    const c = loadConfig(settings, {});
    expect(c.internalHost).toBe("127.0.0.1");
    expect(c.host).toBe("0.0.0.0");
    expect(c.metricsPort).toBe(9464);
    expect(c.internalToken).toBeUndefined();
  });

  it("derives the public ingest URL from WHC_INGEST_PORT unless it is given", () => {
    expect(loadConfig(settings, { WHC_INGEST_PORT: "9090" }).ingestPublicUrl).toBe("http://localhost:9090");
    expect(loadConfig(settings, { WHC_INGEST_PORT: "9090", WHC_INGEST_PUBLIC_URL: "https://hooks.example.test" }).ingestPublicUrl).toBe("https://hooks.example.test");
    expect(loadConfig(settings, { WHC_INGEST_PORT: "9090", WHC_INGEST_PUBLIC_URL: " " }).ingestPublicUrl).toBe("http://localhost:9090");
  });

  it("derives the per-peer and per-endpoint shares of the in-flight budget, never below the largest inbound body", () => {
    const shares = (env: NodeJS.ProcessEnv) => {
      const c = loadConfig(settings, env);
      return [c.ingestMaxInflightBytesPerPeer, c.ingestMaxInflightBytesPerEndpoint];
    };
    expect(shares({})).toEqual([67_108_864, 134_217_728]);
    expect(shares({ WHC_INGEST_MAX_INFLIGHT_BYTES: "1000", WHC_MAX_INBOUND_BODY_BYTES: "100" })).toEqual([250, 500]);
    // A quarter below the largest body: raised to it, so that body can always be admitted.
    expect(shares({ WHC_INGEST_MAX_INFLIGHT_BYTES: "1000", WHC_MAX_INBOUND_BODY_BYTES: "400" })).toEqual([400, 500]);
    expect(shares({ WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER: "20000000", WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT: "30000000" })).toEqual([20_000_000, 30_000_000]);
    const low = refusal({ WHC_MAX_INBOUND_BODY_BYTES: "1000", WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT: "999" });
    expect(low.variable).toBe("WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT");
    expect(low.message).toContain("WHC_MAX_INBOUND_BODY_BYTES");
    expect(refusal({ WHC_INGEST_BODY_IDLE_MS: "10" }).variable).toBe("WHC_INGEST_BODY_IDLE_MS");
  });

  it("defaults the internal URLs to https: once a TLS certificate is configured", () => {
    const plain = loadConfig(settings, {});
    expect([plain.catalogUrl, plain.cryptoUrl, plain.replayUrl]).toEqual(["http://127.0.0.1:50051", "http://127.0.0.1:50052", "http://127.0.0.1:50053"]);
    const tls = loadConfig(settings, { WHC_INTERNAL_TLS_CERT: "/etc/whc/tls.crt" });
    expect([tls.catalogUrl, tls.cryptoUrl, tls.replayUrl]).toEqual(["https://127.0.0.1:50051", "https://127.0.0.1:50052", "https://127.0.0.1:50053"]);
  });

  it("never repeats a key or a MongoDB URI into the message", () => {
    const secrets = {
      WHC_INTERNAL_TOKEN: "a short internal token",
      WHC_BLIND_INDEX_KEY: `${KEY_32}x`,
      WHC_MASTER_KEYS: `k1:${KEY_32}x`,
      WHC_BOOTSTRAP_API_KEYS: "acct:whc_short",
      WHC_MONGODB_URI: "mongo://admin:hunter2@db",
    };
    for (const [name, value] of Object.entries(secrets)) {
      const error = refusal({ [name]: value });
      expect(error.variable).toBe(name);
      expect(error.message).not.toContain(value);
      expect(error.message).toContain(`${value.length} characters`);
    }
  });
});
