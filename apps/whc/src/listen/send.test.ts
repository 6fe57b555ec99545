import { describe, it, expect, afterEach } from "vitest";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { freePort } from "@whc/testing";
import { EXCERPT_BYTES, sendLocal } from "./send.js";

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

const servers: (http.Server | net.Server)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function app(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): Promise<{ origin: URL; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body });
      answer(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { origin: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), seen };
}

describe("sending one capture to the local app", () => {
  it("sends the method, target, headers and body bytes exactly, and reads the answer", async () => {
    const { origin, seen } = await app((_req, res) => res.writeHead(201, { "X-App": "yes" }).end("thanks"));
    const body = Buffer.from([0x7b, 0x00, 0xff, 0xc3, 0x28, 0x7d]);
    const outcome = await sendLocal(
      {
        origin,
        path: "/hooks/ci?x=1&y=%20",
        method: "PATCH",
        headers: [
          ["Stripe-Signature", "t=1,v1=abc"],
          ["x-lower", "kept"],
          ["X-Multi", "one"],
          ["X-Multi", "two"],
          ["X-Utf8", Buffer.from("café", "utf8").toString("latin1")],
        ],
        body,
      },
      5000,
    );
    expect(outcome).toMatchObject({ status: 201, body: Buffer.from("thanks"), bodyTruncated: false });
    expect("status" in outcome && outcome.headers["X-App"]).toEqual(["yes"]);
    const [got] = seen;
    expect(got!.method).toBe("PATCH");
    expect(got!.url).toBe("/hooks/ci?x=1&y=%20");
    expect(got!.body).toEqual(body);
    const pairs = [];
    for (let i = 0; i < got!.rawHeaders.length; i += 2) pairs.push([got!.rawHeaders[i], got!.rawHeaders[i + 1]]);
    expect(pairs).toEqual(
      expect.arrayContaining([
        ["Stripe-Signature", "t=1,v1=abc"],
        ["x-lower", "kept"],
        ["X-Multi", "one"],
        ["X-Multi", "two"],
        ["Content-Length", "6"],
      ]),
    );
    // Header bytes as given: the UTF-8 of café, which Node hands over one character per byte.
    expect(Buffer.from(pairs.find(([n]) => n === "X-Utf8")![1]!, "latin1").toString("utf8")).toBe("café");
  });

  it("keeps the first 64 KiB of a long answer", async () => {
    const { origin } = await app((_req, res) => res.end(Buffer.alloc(EXCERPT_BYTES * 3, 0x61)));
    const outcome = await sendLocal({ origin, path: "/", method: "POST", headers: [], body: Buffer.from("x") }, 5000);
    expect(outcome).toMatchObject({ status: 200, bodyTruncated: true });
    expect("body" in outcome && outcome.body.length).toBe(EXCERPT_BYTES);
  });

  it("names a refused connection and a timeout", async () => {
    const closed = new URL(`http://127.0.0.1:${await freePort()}`);
    expect(await sendLocal({ origin: closed, path: "/", method: "POST", headers: [], body: Buffer.from("x") }, 5000)).toMatchObject({ error: "connection_refused" });

    // Accepts the connection and never answers.
    const silent = net.createServer((socket) => socket.resume());
    servers.push(silent);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const origin = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    const outcome = await sendLocal({ origin, path: "/", method: "POST", headers: [], body: Buffer.from("x") }, 150);
    expect(outcome).toMatchObject({ error: "timeout" });
  });
});
