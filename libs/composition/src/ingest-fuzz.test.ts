import { describe, it, expect, beforeAll, afterAll } from "vitest";
import net from "node:net";
import fc from "fast-check";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * Socket-level fuzz of ingest's receiving surface (issue #19): raw bytes over TCP to the real
 * node:http listener of an all-in-one system with its embedded store. Each run sends a batch
 * of requests at once to an endpoint of its own, then checks that every answer is a
 * well-formed HTTP response or a closed connection, that exactly the captures acknowledged
 * were stored, each as a correct parser reads the request, and that ingest still answers.
 */

const RUNS = 100;
const BATCH = 100;
/** Requests in flight at once. */
const PARALLEL = 100;
/** How long a request that cannot be complete (or bytes that are no request) is given before the socket is dropped. */
const INCOMPLETE_WAIT_MS = 150;
/** A complete request is answered well within this; past it the case fails. */
const COMPLETE_WAIT_MS = 10_000;
const EP = "{EP}";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

/**
 * What a correct parser makes of a case: `stored`, a well-formed capture (answered 200, stored
 * with this method, sub-path and query, and body); `either`, well-formed for a lenient parser
 * (if it is stored, it is stored as this); `refused`, malformed (never 2xx, nothing stored);
 * `incomplete`, a request whose body never ends (nothing stored).
 */
type Verdict = "stored" | "either" | "refused" | "incomplete";
interface Case {
  verdict: Verdict;
  what: string;
  bytes: Buffer;
  model?: { method: string; rest: string; body: Buffer };
}

const CRLF = "\r\n";
const tchar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".split(""));
const token = fc.string({ unit: tchar, minLength: 1, maxLength: 12 });
const pathChar = fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@".split(""), "%20", "%2F", "%00", "%E2%9C%93");
const segment = fc.string({ unit: pathChar, minLength: 1, maxLength: 8 });
const rest = fc
  .tuple(fc.array(segment, { maxLength: 3 }), fc.option(fc.array(fc.tuple(token, fc.string({ unit: pathChar, maxLength: 6 })), { minLength: 1, maxLength: 3 })))
  .map(([segs, query]) => segs.map((s) => `/${s}`).join("") + (query ? `?${query.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));
const method = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
const headerValue = fc.string({ unit: fc.constantFrom(..."abc XYZ 019 ;,=/\"'".split("")), maxLength: 20 }).map((v) => v.trim());
const headers = fc.array(fc.tuple(token.map((n) => `X-${n}`), headerValue), { maxLength: 6 });
const body = fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b));

/** A body in chunks of random sizes, with chunk extensions and trailers now and then. */
const chunked = (b: Buffer) =>
  fc.tuple(fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 8 }), fc.boolean(), fc.boolean()).map(([sizes, ext, trailer]) => {
    const parts: Buffer[] = [];
    let at = 0;
    for (const size of [...sizes, b.length]) {
      if (at >= b.length) break;
      const piece = b.subarray(at, Math.min(b.length, at + size));
      at += piece.length;
      parts.push(Buffer.from(`${piece.length.toString(16)}${ext ? ";x=1" : ""}${CRLF}`), piece, Buffer.from(CRLF));
    }
    parts.push(Buffer.from(`0${CRLF}${trailer ? `X-Trailer: t${CRLF}` : ""}${CRLF}`));
    return Buffer.concat(parts);
  });

/** A well-formed capture, its framing by Content-Length, chunks, or none (no body). */
const wellFormed = fc
  .record({ method, rest, headers, body, framing: fc.constantFrom("length", "chunked", "none") })
  .chain((r) => (r.framing === "chunked" ? chunked(r.body).map((wire) => ({ ...r, wire })) : fc.constant({ ...r, wire: r.body })))
  .map((r) => {
    const b = r.framing === "none" ? Buffer.alloc(0) : r.body;
    const framing = r.framing === "length" ? [`Content-Length: ${b.length}`] : r.framing === "chunked" ? ["Transfer-Encoding: chunked"] : [];
    const lines = [`${r.method} /h/${EP}${r.rest} HTTP/1.1`, "Host: fuzz", ...r.headers.map(([n, v]) => `${n}: ${v}`), ...framing];
    return { head: lines, wire: r.framing === "none" ? Buffer.alloc(0) : r.wire, model: { method: r.method, rest: r.rest, body: b } };
  });

const assemble = (head: string[], wire: Buffer, eol = CRLF) => Buffer.concat([Buffer.from(head.join(eol) + eol + eol, "latin1"), wire]);

/** The request as generated, then one way to break it (or none). */
const fuzzCase: fc.Arbitrary<Case> = fc.tuple(wellFormed, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.boolean(), fc.nat()).map(([r, pick, noise, broken, kind]) => {
  const n = Buffer.from(noise);
  const [requestLine, ...fields] = r.head;
  const withoutFraming = fields.filter((l) => !/^(content-length|transfer-encoding):/i.test(l));
  const bodyBytes = r.model.body;
  // Built only once chosen: some are large.
  const cases: (() => Case)[] = [
    () => ({ verdict: "stored", what: "well-formed", bytes: assemble(r.head, r.wire), model: r.model }),
    () => ({ verdict: "either", what: "bare LF line ends", bytes: assemble(r.head, r.wire, "\n"), model: r.model }),
    () => ({ verdict: "refused", what: "bare CR line ends", bytes: assemble(r.head, r.wire, "\r") }),
    () => ({
      verdict: "refused",
      what: "Content-Length and Transfer-Encoding",
      bytes: assemble([requestLine as string, ...withoutFraming, `Content-Length: ${bodyBytes.length}`, "Transfer-Encoding: chunked"], bodyBytes),
    }),
    () => ({
      verdict: "refused",
      what: "two different Content-Lengths",
      bytes: assemble([requestLine as string, ...withoutFraming, `Content-Length: ${bodyBytes.length}`, `Content-Length: ${bodyBytes.length + 1}`], bodyBytes),
    }),
    () => ({
      verdict: "refused",
      what: "a Content-Length that is no number",
      bytes: assemble([requestLine as string, ...withoutFraming, `Content-Length: ${["-1", "+5", "0x10", "5 5", "1e3", "abc", "99999999999999999999999"][pick % 7]}`], bodyBytes),
    }),
    () => ({
      verdict: "refused",
      what: "a bad chunk size",
      bytes: assemble([requestLine as string, ...withoutFraming, "Transfer-Encoding: chunked"], Buffer.from(`${["zz", "-1", "fffffffffffffffffff", "", "5\r\nabc"][pick % 5]}${CRLF}hello${CRLF}0${CRLF}${CRLF}`)),
    }),
    () => ({
      verdict: "refused",
      what: "a Transfer-Encoding that does not end in chunked",
      bytes: assemble([requestLine as string, ...withoutFraming, `Transfer-Encoding: ${["gzip", "chunked, gzip", "identity"][pick % 3]}`], bodyBytes),
    }),
    () => ({ verdict: "refused", what: "NUL in a header value", bytes: assemble([...r.head, "X-Nul: a\u0000b"], r.wire) }),
    () => ({ verdict: "refused", what: "NUL in a header name", bytes: assemble([...r.head, "X-N\u0000ul: v"], r.wire) }),
    () => ({ verdict: "refused", what: "NUL in the request target", bytes: assemble([`POST /h/${EP}/a\u0000b HTTP/1.1`, ...fields], r.wire) }),
    () => ({ verdict: "refused", what: "a space in the request target", bytes: assemble([`POST /h/${EP}/a b HTTP/1.1`, ...fields], r.wire) }),
    () => ({ verdict: "refused", what: "a header line without a colon", bytes: assemble([...r.head, "X-No-Colon"], r.wire) }),
    () => ({ verdict: "refused", what: "a bad HTTP version", bytes: assemble([`${r.model.method} /h/${EP} ${["HTTP/1.1x", "HTTX/1.1", "HTTP/11", "HTTP/1."][pick % 4]}`, ...fields], r.wire) }),
    () => ({ verdict: "refused", what: "a header section over 64 KiB", bytes: assemble([...r.head, `X-Huge: ${"h".repeat(70 * 1024)}`], r.wire) }),
    () => ({
      verdict: "stored",
      what: "3,000 header lines",
      bytes: assemble([requestLine as string, ...Array.from({ length: 3000 }, (_, i) => `X-N: ${i}`), ...fields], r.wire),
      model: r.model,
    }),
    () => ({ verdict: "refused", what: "noise", bytes: Buffer.concat([n, Buffer.from(CRLF + CRLF)]) }),
    () => ({ verdict: "refused", what: "a request line of noise", bytes: assemble([n.toString("latin1").replace(/[\r\n]/g, "x"), ...fields], r.wire) }),
    () => ({
      // The capture is answered, then the connection closes at the bytes after it.
      verdict: "stored",
      what: "a Content-Length shorter than the body",
      bytes: assemble([requestLine as string, ...withoutFraming, `Content-Length: ${Math.max(0, bodyBytes.length - 1 - (pick % 50))}`], Buffer.concat([bodyBytes, n])),
      model: { ...r.model, body: bodyBytes.subarray(0, Math.max(0, bodyBytes.length - 1 - (pick % 50))) },
    }),
    () => ({
      verdict: "incomplete",
      what: "a Content-Length longer than the body",
      bytes: assemble([requestLine as string, ...withoutFraming, `Content-Length: ${bodyBytes.length + 1 + (pick % 1000)}`], bodyBytes),
    }),
    () => ({
      verdict: "incomplete",
      what: "chunks without their last chunk",
      bytes: assemble([requestLine as string, ...withoutFraming, "Transfer-Encoding: chunked"], Buffer.from(`5${CRLF}hello${CRLF}`)),
    }),
  ];
  // Half the cases well-formed in one way or another, the rest spread over the ways to break one.
  const chosen = broken ? 2 + (kind % (cases.length - 2)) : kind % 2;
  return (cases[chosen] as () => Case)();
});

/** What came back on one connection: the bytes, and whether the server closed it (else the test dropped it). */
interface Exchange {
  received: Buffer;
  serverClosed: boolean;
}

/** One final response has fully arrived (a complete request expects no more). */
function holdsFinalAnswer(received: Buffer): boolean {
  const text = received.toString("latin1");
  let at = 0;
  for (;;) {
    const end = text.indexOf("\r\n\r\n", at);
    if (end < 0) return false;
    const head = text.slice(at, end);
    at = end + 4;
    if (/^HTTP\/1\.1 1\d\d/.test(head)) continue;
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
    return length !== undefined && text.length >= at + Number(length);
  }
}

function exchange(port: number, bytes: Buffer, waitMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let settled = false;
    const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes, () => undefined));
    const finish = (serverClosed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(received), serverClosed });
    };
    let timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (c: Buffer) => {
      received.push(c);
      if (waitMs === COMPLETE_WAIT_MS && holdsFinalAnswer(Buffer.concat(received))) return finish(false);
      // Answers of the complete requests in it are in; the rest waits on more bytes.
      clearTimeout(timer);
      timer = setTimeout(() => finish(false), Math.min(waitMs, INCOMPLETE_WAIT_MS));
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
  });
}

interface Answer {
  status: number;
  body: string;
}

/**
 * Every response on the connection, read as a strict client would; throws at anything that is
 * not a well-formed HTTP/1.1 response. A response cut short is allowed only when the test
 * dropped the connection itself.
 */
function parseResponses({ received, serverClosed }: Exchange): Answer[] {
  const text = received.toString("latin1");
  const answers: Answer[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\r\n\r\n", at);
    if (end < 0) {
      if (serverClosed) throw new Error(`truncated response head: ${JSON.stringify(text.slice(at, at + 200))}`);
      break;
    }
    const [statusLine, ...fieldLines] = text.slice(at, end).split("\r\n");
    const status = /^HTTP\/1\.1 ([1-5]\d\d) [^\r\n]*$/.exec(statusLine as string);
    if (!status) throw new Error(`malformed status line: ${JSON.stringify(statusLine)}`);
    const fields = new Map<string, string>();
    for (const line of fieldLines) {
      const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*?)[ \t]*$/.exec(line);
      if (!m) throw new Error(`malformed header line: ${JSON.stringify(line)}`);
      fields.set((m[1] as string).toLowerCase(), m[2] as string);
    }
    at = end + 4;
    const code = Number(status[1]);
    if (code >= 100 && code < 200) continue;
    expect(fields.has("transfer-encoding"), "ingest frames its answers by length").toBe(false);
    const length = fields.get("content-length");
    if (length === undefined) {
      answers.push({ status: code, body: text.slice(at) });
      break;
    }
    expect(length).toMatch(/^\d+$/);
    if (at + Number(length) > text.length && serverClosed) throw new Error("response body cut short");
    answers.push({ status: code, body: text.slice(at, at + Number(length)) });
    at += Number(length);
  }
  return answers;
}

/** Runs `tasks` with at most `limit` at once. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe("the receiving surface under malformed and hostile requests", () => {
  it(`${RUNS * BATCH} raw requests: well-formed answers or a close, only acknowledged captures stored, each as sent`, async () => {
    const port = Number(new URL(t.ingestUrl).port);
    const seen = new Map<string, Record<string, number>>();
    await fc.assert(
      fc.asyncProperty(fc.array(fuzzCase, { minLength: BATCH, maxLength: BATCH }), async (cases) => {
        const ep = (await t.a.post("/v1/endpoints", {})).body as { id: string };
        const exchanges = await pool(
          cases.map((c, i) => () => {
            const wait = c.verdict === "stored" || c.verdict === "either" ? COMPLETE_WAIT_MS : INCOMPLETE_WAIT_MS;
            // Each case's captures carry its number first in their sub-path.
            return exchange(port, Buffer.from(c.bytes.toString("latin1").replaceAll(EP, `${ep.id}/c${i}`), "latin1"), wait);
          }),
          PARALLEL,
        );
        const acknowledged = new Set<string>();
        cases.forEach((c, i) => {
          const answers = parseResponses(exchanges[i] as Exchange);
          const first = answers[0];
          const tally = seen.get(c.what) ?? {};
          const key = first ? String(first.status) : "closed";
          tally[key] = (tally[key] ?? 0) + 1;
          seen.set(c.what, tally);
          if (c.verdict === "stored") expect(first?.status, c.what).toBe(200);
          if (c.verdict === "refused" || c.verdict === "incomplete") {
            expect(first === undefined || first.status >= 400, `${c.what}: ${first?.status}`).toBe(true);
          }
          for (const a of answers) {
            if (a.status !== 200) continue;
            const { id } = JSON.parse(a.body) as { id: string };
            acknowledged.add(id);
          }
        });

        const listed = await t.a.get(`/v1/endpoints/${ep.id}/events?limit=100`);
        expect(listed.status).toBe(200);
        const stored = (listed.body.items as { id: string }[]).map((e) => e.id);
        expect(new Set(stored)).toEqual(acknowledged);
        await Promise.all(
          stored.map(async (id) => {
            const d = (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body;
            const [, index, path] = /^\/c(\d+)(.*)$/s.exec(d.path) ?? [];
            const c = cases[Number(index)] as Case;
            expect(c?.model, `stored: ${c?.what ?? d.path}`).toBeDefined();
            const bodyBack = d.body === undefined ? Buffer.alloc(0) : Buffer.from(d.body, d.bodyEncoding === "base64" ? "base64" : "utf8");
            expect({ method: d.method, path, body: bodyBack.toString("hex") }, c.what).toEqual({
              method: c.model?.method,
              path: c.model?.rest,
              body: c.model?.body.toString("hex"),
            });
          }),
        );
        expect((await fetch(`${t.ingestUrl}/healthz`)).status).toBe(200);
      }),
      // A failing batch is reported as it is: shrinking a hundred raw requests takes minutes.
      { numRuns: RUNS, endOnFailure: true },
    );
    console.log(`fuzz answers by kind of request: ${JSON.stringify(Object.fromEntries(seen), null, 1)}`);
  }, 600_000);
});
