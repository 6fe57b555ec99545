import fc from "fast-check";
import { describe, it, expect, afterEach } from "vitest";
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createInMemoryTransport, createServiceClient as createClient } from "@whc/rpc";
import { createLogger } from "@whc/logging";
import { CryptoService } from "@whc/contracts";
import { tempDir } from "@whc/testing";
import { open, seal } from "./aead.js";
import { createKeyRing, loadKeyRing, unwrapKey, wrapKey, wrappedKeyId } from "./key-ring.js";
import { blindTokens, createBlindIndexer, MAX_TOKENS_PER_BODY, words } from "./blind-index.js";
import { createCryptoService } from "./service.js";
import { createEnvelopeOpener, createEnvelopeSealer } from "./envelope.js";

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

describe("AES-256-GCM", () => {
  it("opens what it sealed and refuses altered bytes or context", () => {
    const key = randomBytes(32);
    const sealed = seal(key, Buffer.from("hello"), Buffer.from("ctx"));
    expect(open(key, sealed, Buffer.from("ctx")).toString()).toBe("hello");
    const altered = Buffer.from(sealed);
    altered[14] = (altered[14] as number) ^ 1;
    expect(() => open(key, altered, Buffer.from("ctx"))).toThrow();
    expect(() => open(key, sealed, Buffer.from("other"))).toThrow();
    expect(() => open(randomBytes(32), sealed, Buffer.from("ctx"))).toThrow();
  });
});

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

describe("blind index", () => {
  it("matches words case-insensitively and only whole words", () => {
    const key = randomBytes(32);
    const body = blindTokens(key, '{"type":"Invoice.Paid","amount":42,"name":"Zoë"}').map((t) => Buffer.from(t).toString("hex"));
    const token = (w: string) => Buffer.from(blindTokens(key, w)[0] as Uint8Array).toString("hex");
    expect(body).toContain(token("invoice"));
    expect(body).toContain(token("PAID"));
    expect(body).toContain(token("42"));
    expect(body).toContain(token("zoë"));
    expect(body).not.toContain(token("invo"));
    expect([...words("a-b a_b A")]).toEqual(["a", "b"]);
  });

  it("gives different tokens under different keys and never the word itself", () => {
    const [a] = blindTokens(randomBytes(32), "secretword");
    const [b] = blindTokens(randomBytes(32), "secretword");
    expect(Buffer.from(a!).equals(Buffer.from(b!))).toBe(false);
    expect(Buffer.from(a!).toString("latin1")).not.toContain("secret");
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

describe("blind indexer with a word memory", () => {
  const hex = (ts: Uint8Array[]) => ts.map((t) => Buffer.from(t).toString("hex"));

  it("gives exactly the tokens of blindTokens, before and after the memory fills", () => {
    const key = randomBytes(32);
    const indexer = createBlindIndexer(key, 3);
    const long = "z".repeat(70);
    for (const text of ["alpha beta", "beta gamma delta", "ALPHA epsilon", `x${"y".repeat(100)} alpha`, `${long} beta ${long} beta`]) {
      expect(hex(indexer(text))).toEqual(hex(blindTokens(key, text)));
    }
  });

  it("indexes the first MAX_TOKENS_PER_BODY distinct words of a body, in order, on both paths", () => {
    const key = randomBytes(32);
    const many = Array.from({ length: MAX_TOKENS_PER_BODY + 500 }, (_, i) => `w${i}`);
    const ascii = Buffer.from(many.join(" "));
    const unicode = Buffer.from(`é ${many.join(" ")}`);
    const expected = hex(blindTokens(key, many.slice(0, MAX_TOKENS_PER_BODY).join(" ")));
    expect(hex(createBlindIndexer(key)(ascii))).toEqual(expected);
    expect(hex(createBlindIndexer(key)(unicode)).slice(1)).toEqual(expected.slice(0, MAX_TOKENS_PER_BODY - 1));
    expect(createBlindIndexer(key)(unicode)).toHaveLength(MAX_TOKENS_PER_BODY);
    // Repeats do not count against the limit: only distinct words do.
    expect(createBlindIndexer(key)(Buffer.from(`${"again ".repeat(10_000)}${many.join(" ")}`))).toHaveLength(MAX_TOKENS_PER_BODY);
  });

  it("finds the same words in a body's bytes as in its decoded text (ASCII scanner and Unicode path)", () => {
    const key = randomBytes(32);
    const indexer = createBlindIndexer(key);
    const asciiHeavy = fc.array(fc.constantFrom(..."aZ9_ -.{}\"\r\n\t\0Ab0zQ", "é", "Ω", "\u00ff"), { maxLength: 80 }).map((cs) => cs.join(""));
    const bodies = fc.oneof(asciiHeavy.map((t) => Buffer.from(t, "utf8")), fc.uint8Array({ maxLength: 200 }), asciiHeavy);
    // A 2-bit word hash makes most words collide; a 7-entry memory is cleared every few bodies.
    const crowded = createBlindIndexer(key, 7, 2);
    fc.assert(
      fc.property(bodies, (input) => {
        expect(hex(indexer(input))).toEqual(hex(blindTokens(key, input)));
        expect(hex(crowded(input))).toEqual(hex(blindTokens(key, input)));
      }),
      { numRuns: 1000 },
    );
  });
});
