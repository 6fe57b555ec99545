import { describe, it, expect, afterEach, beforeAll, afterAll } from "vitest";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { classifyAddress } from "./classify.js";
import { parseTargetUrl, vetTarget, type Resolver } from "./target.js";
import { sendOnce, type SendInput } from "./send.js";
import { createEgressGuard, refusalReason } from "./guard.js";

/** Answers from a table; never touches DNS or the network. */
const fakeResolver =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const resolver = fakeResolver({
  "rebind.test": ["127.0.0.1"],
  "dual.test": ["93.184.216.34", "10.0.0.7"],
  "dual6.test": ["2606:4700:4700::1111", "fe80::1"],
  "metadata.test": ["169.254.169.254"],
  "imds6.test": ["fd00:ec2::254"],
  "mapped.test": ["::ffff:192.168.1.1"],
  "public.test": ["93.184.216.34"],
  "localhost": ["127.0.0.1", "::1"],
  "localhost.": ["127.0.0.1"],
});

// Every one of these must be refused without private targets allowed. None is ever dialled.
const REFUSED: [string, string][] = [
  ["http://127.0.0.1/", "loopback"],
  ["http://127.255.255.254/", "loopback"],
  ["http://localhost/", "loopback"],
  ["http://LOCALHOST./", "loopback"],
  ["http://[::1]/", "loopback"],
  ["http://2130706433/", "loopback"],
  ["http://0x7f000001/", "loopback"],
  ["http://0177.0.0.1/", "loopback"],
  ["http://127.1/", "loopback"],
  ["http://127.0.0.1./", "loopback"],
  ["http://%31%32%37.0.0.1/", "loopback"],
  ["http://[::ffff:127.0.0.1]/", "loopback"],
  ["http://[::ffff:7f00:1]/", "loopback"],
  ["http://[0:0:0:0:0:ffff:127.0.0.1]/", "loopback"],
  ["http://[64:ff9b::7f00:1]/", "loopback"],
  ["http://0/", "unspecified"],
  ["http://0.0.0.0/", "unspecified"],
  ["http://[::]/", "unspecified"],
  ["http://10.0.0.1/", "private"],
  ["http://167772161/", "private"],
  ["http://0xa000001/", "private"],
  ["http://012.0.0.1/", "private"],
  ["http://172.16.5.4/", "private"],
  ["http://172.31.255.255/", "private"],
  ["http://192.168.1.1/", "private"],
  ["http://[::ffff:192.168.1.1]/", "private"],
  ["http://mapped.test/", "private"],
  ["http://100.64.0.1/", "cgnat"],
  ["http://169.254.1.1/", "link_local"],
  ["http://[fe80::1]/", "link_local"],
  ["http://169.254.169.254/latest/meta-data/", "metadata"],
  ["http://2852039166/", "metadata"],
  ["http://0xa9fea9fe/", "metadata"],
  ["http://0251.0376.0251.0376/", "metadata"],
  ["http://169.254.169.254./", "metadata"],
  ["http://metadata.test/", "metadata"],
  ["http://[fd00:ec2::254]/", "metadata"],
  ["http://imds6.test/", "metadata"],
  ["http://[fc00::1]/", "unique_local"],
  ["http://[fd12:3456::1]/", "unique_local"],
  ["http://224.0.0.1/", "multicast"],
  ["http://[ff02::1]/", "multicast"],
  ["http://255.255.255.255/", "broadcast"],
  ["http://240.0.0.1/", "reserved"],
  ["http://192.0.2.10/", "documentation"],
  ["http://[2001:db8::1]/", "documentation"],
  ["http://198.18.0.1/", "benchmarking"],
  ["http://rebind.test/", "loopback"],
  ["http://dual.test/", "private"],
  ["http://dual6.test/", "link_local"],
];

describe("the SSRF guard refuses every non-public target, in every spelling", () => {
  it.each(REFUSED)("%s (%s)", async (url, category) => {
    const vetted = await vetTarget(url, { allowPrivate: false, resolver });
    expect(vetted).toMatchObject({ ok: false, reason: "address_not_allowed", category });
  });

  it(`covers at least 40 targets (${REFUSED.length})`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
  });

  it.each([
    ["file:///etc/passwd", "scheme_not_allowed"],
    ["ftp://example.test/", "scheme_not_allowed"],
    ["gopher://127.0.0.1:25/", "scheme_not_allowed"],
    ["javascript:alert(1)", "scheme_not_allowed"],
    ["data:text/plain,hi", "scheme_not_allowed"],
    ["http://user:pass@public.test/", "credentials_in_url"],
    ["not a url", "bad_url"],
    ["http://[fe80::1%25eth0]/", "bad_url"],
    ["http://public.test:0/", "port_not_allowed"],
    ["http://nowhere.test/", "dns_failure"],
  ])("%s -> %s", async (url, reason) => {
    expect(await vetTarget(url, { allowPrivate: false, resolver })).toMatchObject({ ok: false, reason });
  });

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "::ffff:8.8.8.8"])(
    "classifies %s as public",
    (ip) => {
      expect(classifyAddress(ip)).toEqual({ category: "public", allowed: true });
    },
  );

  it("classifies alike every time, also after more addresses than it remembers", () => {
    const sample: [string, string][] = [
      ["127.0.0.1", "loopback"],
      ["169.254.169.254", "metadata"],
      ["::ffff:10.0.0.1", "private"],
      ["8.8.8.8", "public"],
    ];
    for (const [ip, category] of sample) expect(classifyAddress(ip).category).toBe(category);
    for (let i = 0; i < 3000; i += 1) expect(classifyAddress(`8.8.${i >> 8}.${i & 255}`).allowed).toBe(true);
    for (const [ip, category] of sample) expect(classifyAddress(ip).category).toBe(category);
  });

  it("vets a public name to the address it resolved", async () => {
    expect(await vetTarget("https://public.test/hook?x=1", { allowPrivate: false, resolver })).toMatchObject({
      ok: true,
      address: "93.184.216.34",
      family: 4,
      target: { hostname: "public.test", port: 443 },
    });
  });

  it("allows private targets only when configured, and never cloud metadata", async () => {
    expect(await vetTarget("http://10.0.0.1/", { allowPrivate: true, resolver })).toMatchObject({ ok: true });
    expect(await vetTarget("http://169.254.169.254/", { allowPrivate: true, resolver })).toMatchObject({ ok: false, category: "metadata" });
    expect(await vetTarget("ftp://10.0.0.1/", { allowPrivate: true, resolver })).toMatchObject({ ok: false, reason: "scheme_not_allowed" });
  });

  it("parses targets into one canonical host", () => {
    const parsed = parseTargetUrl("http://0x7f000001:8080/a?b=c");
    expect(parsed).toMatchObject({ ok: true, target: { hostname: "127.0.0.1", literalIp: "127.0.0.1", port: 8080 } });
  });
});

describe("end-to-end refusals with the real resolver, aimed at a trap", () => {
  let trap: http.Server;
  let hits = 0;
  let port = 0;
  beforeAll(async () => {
    trap = http.createServer((_req, res) => {
      hits += 1;
      res.end("should never be reached");
    });
    await new Promise<void>((r) => trap.listen(0, "127.0.0.1", r));
    port = (trap.address() as AddressInfo).port;
  });
  afterAll(() => {
    trap.close();
  });

  it.each(["127.0.0.1", "localhost", "[::1]", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]"])(
    "refuses http://%s:<trap>/",
    async (host) => {
      const vetted = await vetTarget(`http://${host}:${port}/`, { allowPrivate: false });
      expect(vetted.ok).toBe(false);
      expect(hits).toBe(0);
    },
  );
});

describe("sendOnce against local servers", () => {
  const servers: (http.Server | net.Server)[] = [];
  afterEach(() => servers.splice(0).forEach((s) => s.close()));

  async function serve(handler: http.RequestListener) {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  }

  async function send(url: string, extra: Partial<SendInput> = {}) {
    const vetted = await vetTarget(url, { allowPrivate: true });
    if (!vetted.ok) throw new Error(vetted.reason);
    return sendOnce({
      target: vetted.target,
      address: vetted.address,
      family: vetted.family,
      method: "POST",
      headers: [],
      body: undefined,
      connectTimeoutMs: 2000,
      totalTimeoutMs: 3000,
      maxExcerptBytes: 4096,
      ...extra,
    });
  }

  it("delivers method, path, headers (latin1 bytes too) and body exactly", async () => {
    let seen: { method?: string; url?: string; raw: string[]; body: Buffer } = { raw: [], body: Buffer.alloc(0) };
    const port = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen = { method: req.method, url: req.url, raw: req.rawHeaders, body: Buffer.concat(chunks) };
        res.writeHead(201);
        res.end("created");
      });
    });
    const body = Buffer.from([0, 1, 2, 255, 13, 10]);
    const result = await send(`http://127.0.0.1:${port}/hook/x?y=1&z=%20`, {
      method: "PUT",
      headers: [
        ["X-One", "1"],
        ["x-latin", "caf\u00e9"],
        ["X-One", "2"],
        ["Host", "evil.example"],
        ["Content-Length", "999"],
        ["Connection", "keep-alive"],
      ],
      body,
    });
    expect(result).toMatchObject({ kind: "response", status: 201, excerptTruncated: false });
    expect(result.kind === "response" && result.excerpt.toString()).toBe("created");
    expect(seen.method).toBe("PUT");
    expect(seen.url).toBe("/hook/x?y=1&z=%20");
    expect(seen.body.equals(body)).toBe(true);
    const pairs: [string, string][] = [];
    for (let i = 0; i < seen.raw.length; i += 2) pairs.push([seen.raw[i]!, seen.raw[i + 1]!]);
    expect(pairs.filter(([n]) => n.toLowerCase() === "x-one").map(([, v]) => v)).toEqual(["1", "2"]);
    expect(Buffer.from(pairs.find(([n]) => n === "x-latin")![1], "latin1").equals(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe(true);
    expect(pairs.find(([n]) => n.toLowerCase() === "host")![1]).toBe(`127.0.0.1:${port}`);
    expect(pairs.find(([n]) => n.toLowerCase() === "content-length")![1]).toBe("6");
  });

  it("answers the response's header lines as received: names as spelled, in order, repeats kept", async () => {
    const port = await serve((_req, res) => {
      res.setHeader("X-Answer", "yes");
      res.setHeader("Set-Cookie", ["a=1", "b=2"]);
      res.end("ok");
    });
    const result = await send(`http://127.0.0.1:${port}/`);
    expect(result.kind === "response" && result.rawHeaders.filter(([n]) => n.startsWith("X-") || n === "Set-Cookie")).toEqual([
      ["X-Answer", "yes"],
      ["Set-Cookie", "a=1"],
      ["Set-Cookie", "b=2"],
    ]);
  });

  it("returns a redirect as an answer and never follows it", async () => {
    let followed = 0;
    const second = await serve((_req, res) => {
      followed += 1;
      res.end();
    });
    const first = await serve((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${second}/` });
      res.end();
    });
    expect(await send(`http://127.0.0.1:${first}/`)).toMatchObject({ kind: "response", status: 302 });
    expect(followed).toBe(0);
  });

  it("reads only the excerpt of a large answer", async () => {
    const port = await serve((_req, res) => res.end(Buffer.alloc(100_000, 0x61)));
    const result = await send(`http://127.0.0.1:${port}/`);
    expect(result.kind === "response" && result.excerpt.length).toBe(4096);
    expect(result).toMatchObject({ excerptTruncated: true });
    const small = await serve((_req, res) => res.end(Buffer.alloc(4096, 0x61)));
    expect(await send(`http://127.0.0.1:${small}/`)).toMatchObject({ excerptTruncated: false });
  });

  it("names network failures: timeout, refused, reset, TLS", async () => {
    const slow = await serve(() => undefined);
    expect(await send(`http://127.0.0.1:${slow}/`, { totalTimeoutMs: 300 })).toMatchObject({ kind: "network_error", reason: "timeout" });

    const closed = await serve(() => undefined);
    servers.pop()!.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(await send(`http://127.0.0.1:${closed}/`)).toMatchObject({ kind: "network_error", reason: "connection_refused" });

    const resetter = net.createServer((socket) => socket.destroy());
    servers.push(resetter);
    await new Promise<void>((r) => resetter.listen(0, "127.0.0.1", r));
    const resetPort = (resetter.address() as AddressInfo).port;
    expect(await send(`http://127.0.0.1:${resetPort}/`)).toMatchObject({ kind: "network_error", reason: "connection_reset" });

    const plain = await serve((_req, res) => res.end("plain http"));
    expect(await send(`https://127.0.0.1:${plain}/`)).toMatchObject({ kind: "network_error", reason: "tls_error" });
  });
});

describe("the deployment's own internal services (design §14)", () => {
  const guard = createEgressGuard({
    allowPrivate: true,
    resolver: fakeResolver({ "localhost": ["127.0.0.1", "::1"], "catalog.internal": ["10.0.0.5"], "app.test": ["10.0.0.9"] }),
    internal: [
      { host: "127.0.0.1", port: 50052 },
      { host: "catalog.internal", port: 50051 },
      { host: "0.0.0.0", port: 9464 },
    ],
  });

  it("refuses them even with private targets allowed, in every spelling that reaches them, as reason port", async () => {
    for (const url of [
      "http://127.0.0.1:50052/webhookcapture.crypto.v1.CryptoService/GetBlindIndexKey",
      "http://localhost:50052/",
      "http://[::1]:50052/",
      "http://127.9.9.9:50052/",
      "http://catalog.internal:50051/",
      "http://10.0.0.5:50051/",
      "http://127.0.0.1:9464/metrics",
    ]) {
      const vetted = await guard.vet(url);
      expect({ url, vetted }).toEqual({ url, vetted: { ok: false, reason: "internal_service" } });
      expect(refusalReason(vetted as { reason: string })).toBe("port");
    }
  });

  it("lets private targets through on other ports and hosts", async () => {
    for (const url of ["http://127.0.0.1:3000/hook", "http://10.0.0.5:8080/", "http://app.test:50051/"]) {
      expect((await guard.vet(url)).ok, url).toBe(true);
    }
  });

  it("names each refusal as target_not_allowed's details.reason, and leaves DNS and malformed URLs to others", () => {
    expect(refusalReason({ reason: "address_not_allowed", category: "loopback" })).toBe("loopback");
    expect(refusalReason({ reason: "address_not_allowed", category: "link_local" })).toBe("link_local");
    expect(refusalReason({ reason: "address_not_allowed", category: "metadata" })).toBe("metadata");
    for (const category of ["private", "cgnat", "unique_local", "multicast", "broadcast", "reserved", "documentation"]) {
      expect(refusalReason({ reason: "address_not_allowed", category })).toBe("private_address");
    }
    expect(refusalReason({ reason: "scheme_not_allowed" })).toBe("scheme");
    expect(refusalReason({ reason: "credentials_in_url" })).toBe("credentials");
    expect(refusalReason({ reason: "port_not_allowed" })).toBe("port");
    expect(refusalReason({ reason: "dns_failure" })).toBeUndefined();
    expect(refusalReason({ reason: "bad_url" })).toBeUndefined();
  });
});

describe("connections kept per vetted address (ADR 0096)", () => {
  const servers: http.Server[] = [];
  const guards: { close(): void }[] = [];
  afterEach(() => {
    guards.splice(0).forEach((g) => g.close());
    servers.splice(0).forEach((s) => {
      s.closeAllConnections();
      s.close();
    });
  });

  /** A server on `host` (port 0 or the one given) that counts its connections and the ones still open. */
  async function serve(host: string, port: number, handler: (req: http.IncomingMessage, res: http.ServerResponse, nth: number) => void) {
    const served = new WeakMap<net.Socket, number>();
    let connections = 0;
    let open = 0;
    const server = http.createServer((req, res) => {
      const nth = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, nth);
      req.resume();
      req.on("end", () => handler(req, res, nth));
    });
    server.on("connection", (socket: net.Socket) => {
      connections += 1;
      open += 1;
      socket.on("close", () => (open -= 1));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(port, host, r));
    return { port: (server.address() as AddressInfo).port, connections: () => connections, open: () => open };
  }

  function guardOf(options: { resolver?: Resolver; keepIdleMs?: number } = {}) {
    const guard = createEgressGuard({ allowPrivate: true, ...options });
    guards.push(guard);
    return async (url: string, headers: [string, string][] = []) => {
      const vetted = await guard.vet(url);
      if (!vetted.ok) throw new Error(vetted.reason);
      return guard.send({
        target: vetted.target,
        address: vetted.address,
        family: vetted.family,
        method: "POST",
        headers,
        body: Buffer.from("{}"),
        connectTimeoutMs: 2000,
        totalTimeoutMs: 3000,
        maxExcerptBytes: 4096,
      });
    };
  }

  it("sends consecutive requests to one address over one connection, and one each without keeping", async () => {
    const seen: (string | undefined)[] = [];
    const target = await serve("127.0.0.1", 0, (req, res) => {
      seen.push(req.headers.connection);
      res.end("ok");
    });
    const send = guardOf();
    for (let i = 0; i < 5; i += 1) expect(await send(`http://127.0.0.1:${target.port}/hook`)).toMatchObject({ kind: "response", status: 200 });
    expect(target.connections()).toBe(1);
    expect(seen).toEqual(Array(5).fill("keep-alive"));

    const unkept = guardOf({ keepIdleMs: 0 });
    for (let i = 0; i < 3; i += 1) expect(await unkept(`http://127.0.0.1:${target.port}/hook`)).toMatchObject({ kind: "response", status: 200 });
    expect(target.connections()).toBe(4);
    expect(seen.slice(5)).toEqual(["close", "close", "close"]);
  });

  it("never sends a request over a connection kept for another address of the same host and port", async () => {
    const first = await serve("127.0.0.1", 0, (_req, res) => res.end("first"));
    const second = await serve("127.0.0.2", first.port, (_req, res) => res.end("second"));
    const table: Record<string, string[]> = { "moving.test": ["127.0.0.1"] };
    const send = guardOf({ resolver: fakeResolver(table) });
    const answer = async () => {
      const result = await send(`http://moving.test:${first.port}/`);
      return result.kind === "response" ? result.excerpt.toString() : result.reason;
    };
    expect(await answer()).toBe("first");
    expect(await answer()).toBe("first");
    // DNS now answers another address: vetted anew, the request goes there, not over the kept connection.
    table["moving.test"] = ["127.0.0.2"];
    expect(await answer()).toBe("second");
    table["moving.test"] = ["127.0.0.1"];
    expect(await answer()).toBe("first");
    expect([first.connections(), second.connections()]).toEqual([1, 1]);
  });

  it("sends again over a new connection when a kept one was closed before it answered, and only then", async () => {
    // Each connection answers its first request and drops the next without a word, as a
    // destination whose idle timeout meets our request on the wire does.
    const target = await serve("127.0.0.1", 0, (req, res, nth) => (nth === 1 ? res.end(`ok ${nth}`) : req.socket.destroy()));
    const send = guardOf();
    for (let i = 0; i < 3; i += 1) {
      const result = await send(`http://127.0.0.1:${target.port}/`);
      expect(result).toMatchObject({ kind: "response", status: 200 });
      expect(result.kind === "response" && result.excerpt.toString()).toBe("ok 1");
    }
    // The first kept; the second dropped on it and sent again on a connection of its own; the
    // third on a new kept one.
    expect(target.connections()).toBe(3);

    // A new connection that drops the request is the attempt's outcome, not sent twice.
    let requests = 0;
    const dropper = await serve("127.0.0.1", 0, (req) => {
      requests += 1;
      req.socket.destroy();
    });
    expect(await send(`http://127.0.0.1:${dropper.port}/`)).toMatchObject({ kind: "network_error", reason: "connection_reset" });
    expect(requests).toBe(1);
  });

  it("closes a kept connection once it has been idle for keepIdleMs", async () => {
    const target = await serve("127.0.0.1", 0, (_req, res) => res.end("ok"));
    const send = guardOf({ keepIdleMs: 100 });
    await send(`http://127.0.0.1:${target.port}/`);
    expect(target.open()).toBe(1);
    await new Promise((r) => setTimeout(r, 400));
    expect(target.open()).toBe(0);
    await send(`http://127.0.0.1:${target.port}/`);
    expect(target.connections()).toBe(2);

    // The idle time is not a deadline: a destination that answers later than it is waited for.
    const slow = await serve("127.0.0.1", 0, (_req, res) => setTimeout(() => res.end("late"), 400));
    const result = await send(`http://127.0.0.1:${slow.port}/`);
    expect(result.kind === "response" && result.excerpt.toString()).toBe("late");
  });
});
