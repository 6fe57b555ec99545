import { describe, it, expect } from "vitest";
import { ConfigError, loadConfig } from "./config.js";
import { settings } from "./settings.js";

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

  it("parses the values given", () => {
    const key = `whc_${"a".repeat(32)}`;
    const c = loadConfig(spec, {
      WHC_GATEWAY_PORT: "9000",
      WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
      WHC_BOOTSTRAP_API_KEYS: `acct-a:${key}, acct-b:${key}b`,
      WHC_INGEST_PUBLIC_URL: "https://hooks.example.test/",
    });
    expect(c.port).toBe(9000);
    expect(c.allowPrivate).toBe(true);
    expect(c.keys).toEqual([
      { name: "acct-a", value: key },
      { name: "acct-b", value: `${key}b` },
    ]);
    expect(c.publicUrl).toBe("https://hooks.example.test");
  });

  it.each([
    ["WHC_GATEWAY_PORT", "eighty"],
    ["WHC_GATEWAY_PORT", "70000"],
    ["WHC_REPLAY_ALLOW_PRIVATE_TARGETS", "maybe"],
    ["WHC_BOOTSTRAP_API_KEYS", "acct:short"],
    ["WHC_INGEST_PUBLIC_URL", "ftp://x"],
  ])("stops on a bad %s with one line naming it", (name, value) => {
    let error: unknown;
    try {
      loadConfig(spec, { [name]: value });
    } catch (err) {
      error = err;
    }
    expect(ConfigError.is(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(name);
    expect(message).not.toContain("\n");
  });
});
