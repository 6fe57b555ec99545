import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { promisify } from "node:util";
import fc from "fast-check";
import { buildCurlCommand, isMaskedHeader, type CurlInput } from "./index.js";

const run = promisify(execFile);

interface Seen {
  method: string;
  url: string;
  headers: [string, string][];
  body: Buffer;
}

let server: http.Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      seen.push({ method: req.method!, url: req.url!, headers, body: Buffer.concat(chunks) });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

/** Runs the exported command in real bash and returns what the local server received. */
async function runInBash(input: Partial<CurlInput>): Promise<{ out: ReturnType<typeof buildCurlCommand>; got: Seen }> {
  const out = buildCurlCommand({
    method: "POST",
    url: `${base}/hook`,
    headers: [],
    body: undefined,
    bodyTruncated: false,
    unmasked: true,
    ...input,
  });
  expect(out.command).not.toMatch(/[\n\r]/);
  const before = seen.length;
  await run("bash", ["-c", `${out.command} --silent --show-error --max-time 5 -o /dev/null`]);
  expect(seen.length).toBe(before + 1);
  return { out, got: seen[seen.length - 1]! };
}

describe("the exported cURL command, run by real bash and curl", () => {
  it("sends the original method, path, query, headers and body bytes", async () => {
    const body = Buffer.from('{"a":"b\\n","quote":"it\'s"}\r\n');
    const { out, got } = await runInBash({
      method: "PATCH",
      url: `${base}/hook/sub/../x?q=[1]&s=%20{a}`,
      headers: [
        ["Host", "original.example"],
        ["Content-Type", "application/json"],
        ["X-Repeat", "1"],
        ["x-latin", "caf\u00e9"],
        ["X-Repeat", "2"],
        ["X-Empty", ""],
        ["Content-Length", "999"],
        ["User-Agent", "Stripe/1.0"],
      ],
      body,
    });
    expect(out).toMatchObject({ byteIdentical: true, bodyOmitted: false, headersMasked: false });
    expect(got.method).toBe("PATCH");
    expect(got.url).toBe("/hook/sub/../x?q=[1]&s=%20{a}");
    expect(got.body.equals(body)).toBe(true);
    const names = got.headers.map(([n]) => n.toLowerCase());
    expect(names).not.toContain("accept");
    expect(names).not.toContain("expect");
    expect(got.headers.filter(([n]) => n === "X-Repeat").map(([, v]) => v)).toEqual(["1", "2"]);
    expect(got.headers.find(([n]) => n === "X-Empty")).toEqual(["X-Empty", ""]);
    expect(Buffer.from(got.headers.find(([n]) => n === "x-latin")![1], "latin1").toString("hex")).toBe("636166e9");
    expect(got.headers.find(([n]) => n === "User-Agent")![1]).toBe("Stripe/1.0");
    expect(got.headers.find(([n]) => n.toLowerCase() === "content-length")![1]).toBe(String(body.length));
  });

  it("keeps random binary bodies byte-identical (NUL, 0xFF, CRLF, quotes, $(), backticks)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.string({ maxLength: 100 }).map((s) => new Uint8Array(Buffer.from(s, "utf8"))),
          fc.constantFrom(
            ...["@/etc/passwd", "$(touch /tmp/whc-pwned)", "`id`", "'; echo hi; '", "\\x41\\", "!!", "%s%n", "\u0000\u0001"].map(
              (s) => new Uint8Array(Buffer.from(s, "utf8")),
            ),
          ),
        ),
        async (bytes) => {
          const body = Buffer.from(bytes);
          const { out, got } = await runInBash({ body, headers: [["Content-Type", "application/octet-stream"]] });
          expect(out.byteIdentical).toBe(true);
          expect(got.body.equals(body)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);

  it("lets nothing break out of the command", async () => {
    const canary = `/tmp/whc-canary-${process.pid}`;
    rmSync(canary, { force: true });
    const evil = `'; touch ${canary}; echo '$(touch ${canary})\`touch ${canary}\`\n\r`;
    const { got } = await runInBash({
      method: "POST",
      url: `${base}/x?${encodeURIComponent(evil)}`,
      headers: [
        ["X-Evil", evil.replace(/[\n\r]/g, " ")],
        // every one of these characters is legal in a header name
        ["X-Name'$`|~!#&*", "v"],
      ],
      body: Buffer.from(evil),
    });
    expect(existsSync(canary)).toBe(false);
    expect(got.body.toString()).toBe(evil);
    expect(got.headers.find(([n]) => n === "X-Evil")![1]).toBe(evil.replace(/[\n\r]/g, " ").trim());
    expect(got.headers.find(([n]) => n.startsWith("X-Name"))).toEqual(["X-Name'$`|~!#&*", "v"]);
  });

  it("does not read a file for a body starting with @", async () => {
    const { got } = await runInBash({ body: Buffer.from("@/etc/hostname") });
    expect(got.body.toString()).toBe("@/etc/hostname");
  });

  it("sends HEAD and bodiless GET requests without a body", async () => {
    const head = await runInBash({ method: "HEAD", body: new Uint8Array() });
    expect(head.got.method).toBe("HEAD");
    const get = await runInBash({ method: "GET", body: new Uint8Array() });
    expect(get.got).toMatchObject({ method: "GET" });
    expect(get.got.body.length).toBe(0);
    expect(get.out.byteIdentical).toBe(true);
  });
});

describe("masking and flags", () => {
  it("masks secrets unless unmasked", () => {
    const headers: [string, string][] = [
      ["Authorization", "Bearer abc"],
      ["Cookie", "sid=1"],
      ["X-Hub-Signature-256", "sha256=00"],
      ["X-Api-Key", "k"],
      ["x-apikey", "k"],
      ["X-Auth-Token", "t"],
      ["X-Client-Secret", "s"],
      ["X-Shopify-Hmac-Sha256", "h"],
      ["X-Acme-Sig", "configured"],
      ["Content-Type", "application/json"],
    ];
    const masked = buildCurlCommand({ method: "POST", url: "http://x.test/", headers, body: undefined, bodyTruncated: false, unmasked: false, extraMaskedHeaders: ["x-acme-sig"] });
    expect(masked.headersMasked).toBe(true);
    for (const secret of ["Bearer abc", "sid=1", "sha256=00", "configured"]) expect(masked.command).not.toContain(secret);
    expect(masked.command.match(/\[MASKED\]/g)).toHaveLength(9);
    expect(masked.command).toContain("Content-Type: application/json");
    const open = buildCurlCommand({ method: "POST", url: "http://x.test/", headers, body: undefined, bodyTruncated: false, unmasked: true });
    expect(open.headersMasked).toBe(false);
    expect(open.command).toContain("Bearer abc");
    expect(isMaskedHeader("X-Signature")).toBe(true);
    expect(isMaskedHeader("X-Request-Id")).toBe(false);
  });

  it("flags omitted and truncated bodies", () => {
    const omitted = buildCurlCommand({ method: "POST", url: "http://x.test/", headers: [], body: undefined, bodyTruncated: false, unmasked: false });
    expect(omitted).toMatchObject({ bodyOmitted: true, byteIdentical: false });
    expect(omitted.command).not.toContain("--data");
    const truncated = buildCurlCommand({ method: "POST", url: "http://x.test/", headers: [], body: Buffer.from("abc"), bodyTruncated: true, unmasked: false });
    expect(truncated).toMatchObject({ bodyOmitted: false, byteIdentical: false });
    const nul = buildCurlCommand({ method: "POST", url: "http://x.test/", headers: [], body: Buffer.from([0, 1]), bodyTruncated: false, unmasked: false });
    expect(nul.command.startsWith("printf '%s' 'AAE=' | base64 -d | curl ")).toBe(true);
  });
});
