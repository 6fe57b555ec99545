import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendAnswer } from "./reply-plan.js";

const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** A real server answering every request with `body` through sendAnswer; resolves with its URL. */
async function answering(body: Uint8Array, method = "POST"): Promise<{ status: number; length: string | null; bytes: Buffer }> {
  const server = http.createServer((req, res) => req.resume().on("end", () => sendAnswer(res, { status: 201, headers: [["content-type", "application/octet-stream"]], body, delayMs: 0 }, "e1")));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method });
  return { status: res.status, length: res.headers.get("content-length"), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe("sendAnswer", () => {
  it("sends an answer's body byte for byte, small or large, whatever its bytes", async () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const utf8 = new TextEncoder().encode('{"note":"é ✓ 😀"}');
    const large = Uint8Array.from({ length: 40_000 }, (_, i) => (i * 7) % 256);
    for (const body of [every, utf8, large, new Uint8Array(0)]) {
      const got = await answering(body);
      expect(got.status).toBe(201);
      expect(got.length).toBe(String(body.length));
      expect(got.bytes.equals(Buffer.from(body))).toBe(true);
    }
  });

  it("sends the header block alone to a HEAD request", async () => {
    const got = await answering(new TextEncoder().encode("hello"), "HEAD");
    expect(got.status).toBe(201);
    expect(got.length).toBe("5");
    expect(got.bytes.length).toBe(0);
  });
});
