import fc from "fast-check";
import { describe, it, expect } from "vitest";
import { randomBytes } from "node:crypto";
import { openJoined, sealJoined } from "./aead.js";
import { blindTokens, createBlindIndexer, MAX_TOKENS_PER_BODY, open, packSearchTokens, seal, unpackSearchTokens, words } from "./index.js";

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

  it("gives a value sealed alone memory of its own, and two sealed joined back as they were", () => {
    const key = randomBytes(32);
    // seal()'s result may be posted to another thread as it is: no shared pool comes with it.
    const alone = seal(key, Buffer.from("hello"));
    expect(alone.buffer.byteLength).toBe(alone.length);
    const [head, tail] = [Buffer.from("packed request"), randomBytes(1536)];
    const joined = sealJoined(key, head, tail, Buffer.from("ctx"));
    expect(openJoined(open(key, joined, Buffer.from("ctx")))).toEqual({ head, tail });
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

describe("search tokens packed for the append", () => {
  it("gives back the tokens of any text, in order, and refuses a buffer that is no whole number of tokens", () => {
    const key = randomBytes(32);
    const hex = (ts: Uint8Array[]) => ts.map((t) => Buffer.from(t).toString("hex"));
    fc.assert(
      fc.property(fc.string(), (text) => {
        const tokens = blindTokens(key, text);
        const packed = packSearchTokens(tokens);
        expect(packed.length).toBe(tokens.length * 8);
        expect(hex(unpackSearchTokens(packed)!)).toEqual(hex(tokens));
      }),
    );
    expect(unpackSearchTokens(new Uint8Array(12))).toBeUndefined();
    expect(() => packSearchTokens([new Uint8Array(9)])).toThrow(RangeError);
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

  it("gives the tokens of blindTokens for a stream of bodies that repeat some words and bring new ids, whatever its memory's size and collisions", () => {
    const key = randomBytes(32);
    let id = 0;
    // Common words, now and then an id never seen before, repeats within a body, either case.
    const word = fc.oneof(fc.constantFrom("alpha", "Beta", "gamma", "delta", "usd", "200", "paid"), fc.constant("").map(() => `evt${(id += 1)}x`));
    const stream = fc.array(fc.array(word, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(stream, fc.constantFrom([50_000, 30], [5, 30], [50, 3]), fc.boolean(), (bodies, [maxEntries, hashBits], asBytes) => {
        const indexer = createBlindIndexer(key, maxEntries, hashBits);
        for (const words of bodies) {
          const text = words.join(" ");
          expect(hex(indexer(asBytes ? Buffer.from(text) : text))).toEqual(hex(blindTokens(key, text)));
        }
      }),
      { numRuns: 200 },
    );
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
