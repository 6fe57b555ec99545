import { describe, it, expect, afterEach } from "vitest";
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createInMemoryTransport, createServiceClient as createClient } from "@whc/rpc";
import { createLogger } from "@whc/logging";
import { CryptoService } from "@whc/contracts";
import { tempDir } from "@whc/testing";
import { createEnvelopeOpener, createEnvelopeSealer } from "@whc/sealing";
import { createKeyRing, loadKeyRing, unwrapKey, wrapKey, wrappedKeyId } from "./key-ring.js";
import { createCryptoService } from "./service.js";

const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

function ring(ids = ["k1"]) {
  return createKeyRing(
    ids.map((id) => ({ id, key: randomBytes(32) })),
    randomBytes(32),
  );
}

function cryptoClient(r = ring()) {
  const routes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) =>
    router.service(CryptoService, createCryptoService(r));
  return createClient(CryptoService, createInMemoryTransport(routes, createLogger("test", "silent"), 5000));
}

describe("key ring", () => {
  it("generates a ring once under the data directory, readable only by its owner", () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = loadKeyRing({ masterKeys: [], blindIndexKey: undefined, dataDir: dir.path });
    const second = loadKeyRing({ masterKeys: [], blindIndexKey: undefined, dataDir: dir.path });
    expect(first.generated).toBe(true);
    expect(second.generated).toBe(false);
    expect(second.ring.active.key.equals(first.ring.active.key)).toBe(true);
    expect(second.ring.blindIndexKey.equals(first.ring.blindIndexKey)).toBe(true);
    const file = path.join(dir.path, "keyring.json");
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8")).masterKeys).toHaveLength(1);
  });

  it("takes the ring from WHC_MASTER_KEYS, first key active", () => {
    const dir = tempDir();
    dirs.push(dir);
    const k1 = randomBytes(32).toString("base64");
    const k2 = randomBytes(32).toString("base64");
    const { ring: r } = loadKeyRing({
      masterKeys: [
        { name: "new", value: k2 },
        { name: "old", value: k1 },
      ],
      blindIndexKey: randomBytes(32).toString("base64"),
      dataDir: dir.path,
    });
    expect(r.active.id).toBe("new");
    expect([...r.keys.keys()]).toEqual(["new", "old"]);
  });

  it("still unwraps data keys wrapped by a key that is no longer active", () => {
    const oldRing = ring(["old"]);
    const rotated = createKeyRing([{ id: "new", key: randomBytes(32) }, oldRing.active], oldRing.blindIndexKey);
    const dataKey = randomBytes(32);
    const { wrapped, keyId } = wrapKey(oldRing, dataKey);
    expect(keyId).toBe("old");
    expect(wrappedKeyId(wrapped)).toBe("old");
    expect(unwrapKey(rotated, wrapped).dataKey.equals(dataKey)).toBe(true);
    expect(wrapKey(rotated, dataKey).keyId).toBe("new");
  });

  it("refuses a key gone from the ring and keeps secrets and data keys apart", () => {
    const r = ring(["a"]);
    const { wrapped } = wrapKey(r, randomBytes(32));
    expect(() => unwrapKey(ring(["b"]), wrapped)).toThrow(/not in the ring/);
    expect(() => unwrapKey(r, wrapped, "endpoint-secret")).toThrow();
  });
});

describe("crypto service and envelopes", () => {
  it("seals with a cached data key and opens through an unwrap", async () => {
    const client = cryptoClient();
    let issued = 0;
    const counting = { ...client, issueDataKey: (...args: Parameters<typeof client.issueDataKey>) => (issued++, client.issueDataKey(...args)) };
    const sealer = createEnvelopeSealer(counting as typeof client, { maxAgeMs: 60_000, maxUses: 3 });
    const opener = createEnvelopeOpener(client, { maxAgeMs: 60_000, maxEntries: 10 });
    const parts = [];
    for (let i = 0; i < 4; i += 1) parts.push(await sealer.seal("ep-1", Buffer.from(`body ${i}`)));
    expect(issued).toBe(2);
    for (let i = 0; i < 4; i += 1) {
      const opened = await opener.open("ep-1", parts[i]!);
      expect(opened.ok && opened.plaintext.toString()).toBe(`body ${i}`);
    }
  });

  it("binds a body to its endpoint and reports a lost key as failed, not as an error", async () => {
    const client = cryptoClient();
    const sealer = createEnvelopeSealer(client, { maxAgeMs: 60_000, maxUses: 100 });
    const sealed = await sealer.seal("ep-1", Buffer.from("x"));
    const opener = createEnvelopeOpener(client, { maxAgeMs: 60_000, maxEntries: 10 });
    expect(await opener.open("ep-2", sealed)).toEqual({ ok: false, reason: "tampered" });
    const otherRing = createEnvelopeOpener(cryptoClient(), { maxAgeMs: 60_000, maxEntries: 10 });
    expect(await otherRing.open("ep-1", sealed)).toEqual({ ok: false, reason: "key_unavailable" });
  });

  it("seals endpoint secrets that only the same ring opens", async () => {
    const client = cryptoClient();
    const { sealed } = await client.sealSecret({ plaintext: Buffer.from("whsec_abc") });
    expect(Buffer.from(sealed).toString("latin1")).not.toContain("whsec_abc");
    expect(Buffer.from((await client.openSecret({ sealed })).plaintext).toString()).toBe("whsec_abc");
    await expect(cryptoClient().openSecret({ sealed })).rejects.toThrow();
  });
});
