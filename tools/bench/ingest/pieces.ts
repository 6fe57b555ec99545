// Micro-benchmark of the capture path's pieces on the event loop (figures only).
//   npx tsx --tsconfig tsconfig.base.json tools/bench/ingest/pieces.ts
import { randomBytes, randomUUID } from "node:crypto";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { create } from "@bufbuild/protobuf";
import { EventSchema, SealedBodySchema } from "@whc/contracts";
import { seal, createBlindIndexer, createDedupeHasher, packRequest } from "@whc/sealing";
import { bodyShapeText, compileRedactor, deduperOf, redact, verifyCapture } from "@whc/ingest-core";
import { canonicalEventType } from "@whc/signatures";
import { learnGroup } from "@whc/catalog-core";
import { endpointFixture, eventFixture } from "@whc/catalog-core/testing";
import { createSharedBytes, decodeAppend, encodeAppend, openSqliteStore } from "@whc/catalog-sqlite";
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
// Deduplication (design §17, ADR 0083): what ingest does per capture of an endpoint with
// `dedupe`: the key's material (the provider's own id, or the fields' values) read from the
// request as it arrived, then its keyed hash (HMAC-SHA256) sent with the capture.
const dedupeInput = { provider: "stripe", headers, body, rest: "/orders/7?source=bench" };
const auto = deduperOf('{"windowSeconds":3600,"key":"auto"}')!;
const fields = deduperOf('{"windowSeconds":600,"fields":["header.x-request-id","body.data.object.id","query.source"]}')!;
const hasher = createDedupeHasher(randomBytes(32));
const material = auto.materialOf(dedupeInput)!;
time("dedupe auto: the provider's id", 20000, () => auto.materialOf(dedupeInput));
time("dedupe fields: header, body, query", 20000, () => fields.materialOf(dedupeInput));
time("dedupe: keyed hash (HMAC-SHA256)", 20000, () => hasher(endpointId, material));
time("dedupe auto: id and hash, per capture", 20000, () => hasher(endpointId, auto.materialOf(dedupeInput)!));
// The catalog's side: appends of 25 captures to the embedded store (in memory, so the figure
// is the transaction's CPU, not the disk's), with and without a key per capture.
const dedupeStore = openSqliteStore({ file: ":memory:" });
const { key: dedupeAccount } = await dedupeStore.ensureApiKey("dedupe", randomBytes(32), "whc_dedupe", Date.now());
const dedupeEndpoint = await dedupeStore.createEndpoint(endpointFixture(dedupeAccount.accountId));
let keyed = 0;
const appendBatch = async (withKeys: boolean) => {
  const events = Array.from({ length: 25 }, () =>
    eventFixture(dedupeEndpoint, withKeys ? { dedupe: { keyHash: hasher(endpointId, String(keyed++)), windowMs: 3_600_000 } } : {}),
  );
  await dedupeStore.appendEvents(events, Date.now);
};
/** CPU µs per capture of `rounds` appends of 25. */
const appendCpu = async (withKeys: boolean, rounds: number) => {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await appendBatch(withKeys);
  const used = process.cpuUsage(cpu0);
  return (used.user + used.system) / rounds / 25;
};
await appendCpu(false, 40);
await appendCpu(true, 40);
// Alternated in pairs, so that the store's growth and the machine's load weigh on both alike.
const pairs: [number, number][] = [];
for (let i = 0; i < 6; i++) pairs.push([await appendCpu(false, 100), await appendCpu(true, 100)]);
const fmt = (n: number) => n.toFixed(1);
console.log(`append, SQLite, 25 a batch, CPU µs per capture, no key / a key each (6 pairs): ${pairs.map(([a, b]) => `${fmt(a)}/${fmt(b)}`).join(", ")}`);
const added = pairs.map(([a, b]) => b - a).sort((x, y) => x - y);
console.log(`append, SQLite: a key adds, median of the pairs: ${fmt((added[2]! + added[3]!) / 2)} µs CPU per capture`);
await dedupeStore.close();
time("randomUUID", 20000, () => randomUUID());
time("requestContext.run", 20000, () => requestContext.run({ requestId: "x" }, () => 1));
const { port1, port2 } = new MessageChannel();
port2.on("message", () => undefined);
const batch = Array.from({ length: 25 }, () => ({ ...event, headers: event.headers.map((h) => [h.name, h.value]) }));
time("postMessage, per event in 25", 2000, () => port1.postMessage({ id: 1, method: "appendEvents", args: [batch] }));
console.log(`(postMessage figure is for a batch of 25: divide by 25)`);
port1.close();
// The append's hand-over to the store's thread, as worker-store.ts makes it: a batch of 25 of
// the benchmark's captures (sealed body, search tokens, diagnostic) encoded, cloned through a
// real message port and decoded, both threads' work in this one.
const handOverEvents = Array.from({ length: 25 }, () =>
  eventFixture(dedupeEndpoint, {
    headers: [],
    body: { ciphertext: seal(key, body, Buffer.from(endpointId)), wrappedKey: new Uint8Array(randomBytes(71)), keyId: "kmx01nxbt" },
    searchTokens: new Uint8Array(randomBytes(328)),
    // As every capture without a response sequence or redactions arrives from ingest.
    sequenceStatuses: [],
    redactionsJson: "",
    diagnosticJson: JSON.stringify({ contentType: { declared: "application/json", bodyIs: "json" }, signature: { verdict: "unverified", explanation: "x".repeat(200) } }),
  }),
);
const times = handOverEvents.map(() => Date.now());
const hand = new MessageChannel();
const shared = createSharedBytes();
const handOver = (lend: boolean) => () => {
  let lent: ReturnType<typeof shared.lend> | undefined;
  hand.port1.postMessage({ id: 1, method: "appendEvents", args: [encodeAppend(handOverEvents, times, lend ? (n) => (lent = shared.lend(n)).bytes : undefined)] });
  decodeAppend((receiveMessageOnPort(hand.port2)!.message as { args: [Parameters<typeof decodeAppend>[0]] }).args[0]);
  lent?.giveBack();
};
time("append hand-over, 25, own buffer", 4000, handOver(false));
time("append hand-over, 25, shared bytes", 4000, handOver(true));
console.log(`(hand-over figures are for a batch of 25: divide by 25)`);
hand.port1.close();
