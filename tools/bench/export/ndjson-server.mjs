// An export-shaped NDJSON answer served as fast as the socket takes it, for tools/bench/export:
// GET /v1/endpoints lists one endpoint `bulk`; every other GET answers LINES lines of about 2.5 KB
// (the e2e's 2 KiB bodies as a detail), framed one HTTP chunk per line (FRAMING=line, what the
// gateway wrote before ADR 0095) or about 64 KiB a chunk (FRAMING=64k, what it writes now).
// Listens on PORT; prints `ready <port>`.
import http from "node:http";

const LINES = Number(process.env.LINES ?? 100_000);
const PER_CHUNK = process.env.FRAMING === "line" ? 1 : 25;
const line = (n) =>
  `${JSON.stringify({ id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, receivedAt: "2026-01-01T00:00:00.000Z", body: "x".repeat(2400) })}\n`;
const chunks = Array.from({ length: 1000 / PER_CHUNK }, (_, c) => Buffer.from(Array.from({ length: PER_CHUNK }, (_, k) => line(c * PER_CHUNK + k)).join("")));

const server = http.createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname === "/v1/endpoints") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [{ id: "00000000-0000-4000-8000-000000000abc", slug: "bulk" }] }));
    return;
  }
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  let sent = 0;
  const pump = () => {
    while (sent < LINES) {
      const ok = res.write(chunks[(sent / PER_CHUNK) % chunks.length]);
      sent += PER_CHUNK;
      if (!ok) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`ready ${server.address().port}`));
