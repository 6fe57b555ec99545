// Micro-benchmark of the capture path's pieces on the event loop (figures only).
//   npx tsx --tsconfig tsconfig.base.json tools/bench/ingest/pieces.ts
import { randomBytes, randomUUID } from "node:crypto";
import { MessageChannel } from "node:worker_threads";
import { create } from "@bufbuild/protobuf";
import { EventSchema, SealedBodySchema } from "@whc/contracts";
import { seal, createBlindIndexer, packRequest } from "@whc/sealing";
import { bodyShapeText, compileRedactor, redact, verifyCapture } from "@whc/ingest-core";
import { canonicalEventType } from "@whc/signatures";
import { learnGroup } from "@whc/catalog-core";
import { endpointFixture } from "@whc/catalog-core/testing";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { eventSummaryJson } from "@whc/api-model/present";
import { requestContext } from "@whc/logging";
import { compileFilter, filterView, type CompiledFilter } from "@whc/routing";
import * as payload from "./payload.mjs";

const body = Buffer.from(payload.body);
// Frozen, as ingest hands them over (rawHeaderPairs).
const headers: readonly [string, string][] = Object.freeze([
  ["Host", "127.0.0.1:8081"],
  ...Object.entries(payload.headers),
  ["content-length", String(body.length)],
] as [string, string][]);
const key = randomBytes(32);
const indexer = createBlindIndexer(randomBytes(32));
const endpointId = randomUUID();

/** Wall time, and this process's CPU time (what a loaded machine distorts less), per call. */
function time(name: string, n: number, fn: () => unknown): void {
  for (let i = 0; i < Math.min(n, 2000); i++) fn();
  const t = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(cpu);
  const us = Number(process.hrtime.bigint() - t) / 1000 / n;
  const cpuUs = (used.user + used.system) / n;
  console.log(`${name.padEnd(34)} ${us.toFixed(2).padStart(8)} µs   cpu ${cpuUs.toFixed(2).padStart(8)} µs`);
}

const verify = () =>
  verifyCapture({ provider: "generic", headers, body, complete: true, genericSignatureHeader: "", genericSignaturePrefix: "", nowMs: Date.now() });
const makeEvent = () =>
  create(EventSchema, {
    accountId: endpointId,
    endpointId,
    method: "POST",
    path: "",
    headers: headers.map(([name, value]) => ({ name, value })),
    remoteIp: "127.0.0.1",
    provider: "stripe",
    verification: "unverified",
    responseCode: 200,
    originalSizeBytes: BigInt(body.length),
    bodyStored: true,
  });
const event = makeEvent();
event.body = create(SealedBodySchema, { ciphertext: seal(key, body, Buffer.from(endpointId)), wrappedKey: randomBytes(60), keyId: "k1" });
event.searchTokens = indexer(body);
event.id = randomUUID();

time("verifyCapture (detect + event type)", 20000, verify);
// A hostile shape: what one sender can make the event loop do with one request.
const nested = Buffer.from(`{"a":${"[".repeat(1 << 19)}${"]".repeat(1 << 19)},"type":"t"}`);
time("event type of 1 MiB nested arrays", 20, () => canonicalEventType("stripe", [], nested));
const manyWords = Buffer.from(Array.from({ length: 116_000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`).join(" "));
time("blind index of 116,000 distinct words", 5, () => createBlindIndexer(randomBytes(32))(manyWords));
const bigForm = Buffer.from("a=1&".repeat(2 * 1024 * 1024));
const formHeaders: [string, string][] = [["X-Slack-Signature", "v0=0"], ["Content-Type", "application/x-www-form-urlencoded"]];
time("event type of an 8 MiB form", 5, () => canonicalEventType("slack", formHeaders, bigForm));
time("create(EventSchema)", 20000, makeEvent);
time("seal (AES-256-GCM, 1.5 KB)", 20000, () => seal(key, body, Buffer.from(endpointId)));
time("blind index (memoised words)", 20000, () => indexer(body));
// What sealing the request adds (ADR 0009): its headers, sub-path and query packed and sealed.
const requestAad = Buffer.from(`${endpointId}\0request`);
time("packRequest (13 headers)", 20000, () => packRequest({ path: "/orders/7?source=bench", headers }));
time("packRequest + seal of the request", 20000, () => seal(key, packRequest({ path: "/orders/7?source=bench", headers }), requestAad));
time("eventSummaryJson", 20000, () => eventSummaryJson(event));
// Redaction (design §16, ADR 0045): what a capture costs with an endpoint's redact configured.
const redactor = compileRedactor({ headers: ["stripe-signature"], jsonPaths: ["$.data.object.customer", "$.data.object.lines[*].description"], patterns: ["\\b\\d{13,19}\\b"] })!;
time("redact: 1 header, 2 JSON paths, 1 pattern", 20000, () => redact(redactor, headers, body));
const headerOnly = compileRedactor({ headers: ["authorization"] })!;
time("redact: 1 header", 20000, () => redact(headerOnly, headers, body));
const pathOnly = compileRedactor({ jsonPaths: ["$.data.object.customer"] })!;
time("redact: 1 JSON path", 20000, () => redact(pathOnly, headers, body));
const patternOnly = compileRedactor({ patterns: ["\\b\\d{13,19}\\b"] })!;
time("redact: 1 pattern (card numbers)", 20000, () => redact(patternOnly, headers, body));
// The worst an allowed pattern can be made to do (ADR 0045): 1 MiB of digits, cost 255.
const digits = Buffer.alloc(1 << 20, "1");
time("redact: pattern \\d{1,85}x, 1 MiB of digits", 3, () => redact(compileRedactor({ patterns: ["\\d{1,85}x"] })!, [], digits));
// Schema learning (design §19, ADR 0090): the body's shape, read by ingest on every JSON capture.
time("body shape (1.5 KB event)", 20000, () => bodyShapeText(body));
time("JSON.parse of the same (for scale)", 20000, () => JSON.parse(body.toString("utf8")));
const hostileDeep = Buffer.from(`{"a":${"[".repeat(120 * 1024)}${"]".repeat(120 * 1024)}}`);
time("body shape: 240 KiB of nested arrays", 20, () => bodyShapeText(hostileDeep));
const hostileWide = Buffer.from(`{"a":[${Array(120 * 1024).fill("0").join(",")}]}`);
time("body shape: 240 KiB array of numbers", 20, () => bodyShapeText(hostileWide));
const hostileKeys = Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`k${i.toString(36)}`, i]))));
time(`body shape: ${hostileKeys.length >> 10} KiB of distinct keys`, 20, () => bodyShapeText(hostileKeys));
// The catalog's side (ADR 0090): learning a capture's shape after the commit, batches of 50
// observations of one type as the learner hands them to the store: the pure learning alone,
// and the store call on an in-memory SQLite catalog (one transaction per batch).
const shape = bodyShapeText(body);
const observations = Array.from({ length: 50 }, (_, i) => ({ accountId: "a", endpointId, eventType: "invoice.payment_succeeded", eventId: randomUUID(), receivedAt: i, shape }));
let learned = learnGroup(undefined, observations, 3_600_000).schema;
time("learn 50 shapes (pure), per capture", 400, () => (learned = learnGroup(learned, observations, 3_600_000).schema));
console.log(`(figure is for 50 captures: divide by 50)`);
const store = openSqliteStore({ file: ":memory:" });
const { key: account } = await store.ensureApiKey("bench", randomBytes(32), "whc_bench", Date.now());
await store.createEndpoint({ ...endpointFixture(account.accountId), id: endpointId });
const storeObservations = observations.map((o) => ({ ...o, accountId: account.accountId }));
const rounds = 200;
await store.learnSchemas(storeObservations, 3_600_000);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) await store.learnSchemas(storeObservations, 3_600_000);
const storeCpu = process.cpuUsage(cpu0);
console.log(
  `${"learnSchemas, SQLite, per capture".padEnd(34)} ${(Number(process.hrtime.bigint() - t0) / 1000 / rounds / 50).toFixed(2).padStart(8)} µs   cpu ${((storeCpu.user + storeCpu.system) / rounds / 50).toFixed(2).padStart(8)} µs`,
);
await store.close();
// Routing (design §17, ADR 0080): what ingest does per capture of a relay endpoint with
// filters: build the capture's view (the body parsed only when a filter reads it) and test
// each destination's compiled filter, as withForward does.
const parts = { method: "POST", rest: "/orders/7?source=bench", headers, body, eventType: "invoice.payment_succeeded", provider: "stripe", verification: "verified" };
const route = (filters: CompiledFilter[]) => () => {
  const view = filterView(parts);
  return filters.filter((f) => f.test(view)).length;
};
const byType = compileFilter({ eventType: { $in: ["invoice.paid", "invoice.payment_succeeded"] } });
const byBody = compileFilter({ "body.data.object.currency": "usd", "body.data.object.amount_paid": { $gte: 1000 } });
const tenFilters = [
  byType,
  ...["eur", "gbp", "jpy"].map((currency) => compileFilter({ "body.data.object.currency": currency })),
  compileFilter({ "headers.x-custom-tenant": { $in: ["globex", "initech"] } }),
  compileFilter({ eventType: { $regex: "^customer\\." } }),
  compileFilter({ $or: [{ "body.type": "charge.refunded" }, { "query.source": "replay" }] }),
  compileFilter({ path: { $regex: "^/refunds" } }),
  compileFilter({ "body.data.object.lines": { $size: 3 } }),
  compileFilter({ verification: "failed" }),
];
time("routing: 1 filter on eventType", 20000, route([byType]));
time("routing: 1 filter on the body", 20000, route([byBody]));
time("routing: 10 filters (1 matches)", 20000, route(tenFilters));
time("randomUUID", 20000, () => randomUUID());
time("requestContext.run", 20000, () => requestContext.run({ requestId: "x" }, () => 1));
const { port1, port2 } = new MessageChannel();
port2.on("message", () => undefined);
const batch = Array.from({ length: 25 }, () => ({ ...event, headers: event.headers.map((h) => [h.name, h.value]) }));
time("postMessage, per event in 25", 2000, () => port1.postMessage({ id: 1, method: "appendEvents", args: [batch] }));
console.log(`(postMessage figure is for a batch of 25: divide by 25)`);
port1.close();
