import type { DestinationFilter, FieldReason } from "@whc/api-model";

/**
 * The filter operator table (design §17): captures x filters -> which captures each filter
 * matches. One table, run where filters are evaluated: by @whc/routing itself, by ingest in the
 * all-in-one process (libs/composition) and by the distributed services (tools/e2e), each
 * capture sent as a real request to a relay endpoint whose destinations carry the filters.
 */

/** A capture as a sender makes it; `view` is what ingest derives from it (the generic provider, no secret). */
export interface TableCapture {
  id: string;
  method: string;
  /** Sub-path and query after the webhook URL. */
  rest: string;
  headers: [string, string][];
  body: Uint8Array;
  eventType: string;
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

export const TABLE_CAPTURES: readonly TableCapture[] = [
  {
    id: "paid",
    method: "POST",
    rest: "/orders/eu?env=prod&env=dev",
    headers: [
      ["Content-Type", "application/json"],
      ["X-Tenant", "a"],
      ["X-Tenant", "z"],
    ],
    body: json({ type: "invoice.paid", data: { amount: 500, currency: "eur", items: [{ sku: "A", qty: 2 }, { sku: "B", qty: 1 }] } }),
    eventType: "invoice.paid",
  },
  {
    id: "failed",
    method: "POST",
    rest: "/orders/us",
    headers: [
      ["Content-Type", "application/json"],
      ["x-tenant", "b"],
    ],
    body: json({ type: "invoice.failed", data: { amount: 50, currency: "usd", items: [] } }),
    eventType: "invoice.failed",
  },
  {
    id: "text",
    method: "PUT",
    rest: "/notes",
    headers: [["Content-Type", "Text/Plain; charset=utf-8"]],
    body: new TextEncoder().encode("hello world"),
    eventType: "",
  },
  {
    id: "binary",
    method: "POST",
    rest: "/blob",
    headers: [["Content-Type", "application/octet-stream"]],
    body: new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
    eventType: "",
  },
  {
    id: "ping",
    method: "GET",
    rest: "?ping=1",
    headers: [],
    body: new Uint8Array(),
    eventType: "",
  },
];

const ALL = TABLE_CAPTURES.map((c) => c.id);

export interface TableFilter {
  name: string;
  filter: DestinationFilter | undefined;
  /** The ids of the captures it matches, in table order. */
  matches: string[];
}

/** Every operator §17 allows, alone and together, over every field of the view. */
export const TABLE_FILTERS: readonly TableFilter[] = [
  { name: "none", filter: undefined, matches: ALL },
  { name: "empty", filter: {}, matches: ALL },
  { name: "eventType equals", filter: { eventType: "invoice.paid" }, matches: ["paid"] },
  { name: "$eq", filter: { "body.type": { $eq: "invoice.failed" } }, matches: ["failed"] },
  { name: "$in", filter: { eventType: { $in: ["invoice.paid", "invoice.failed"] } }, matches: ["paid", "failed"] },
  { name: "$nin (no event type is null)", filter: { eventType: { $nin: ["invoice.paid"] } }, matches: ["failed", "text", "binary", "ping"] },
  { name: "$ne", filter: { method: { $ne: "POST" } }, matches: ["text", "ping"] },
  { name: "header, lower-case name, first value", filter: { "headers.x-tenant": "a" }, matches: ["paid"] },
  { name: "header's second value is not seen", filter: { "headers.x-tenant": "z" }, matches: [] },
  { name: "$exists false", filter: { "headers.x-tenant": { $exists: false } }, matches: ["text", "binary", "ping"] },
  { name: "$gt", filter: { "body.data.amount": { $gt: 100 } }, matches: ["paid"] },
  { name: "$gte with $lt", filter: { "body.data.amount": { $gte: 50, $lt: 500 } }, matches: ["failed"] },
  { name: "$lte", filter: { "body.data.amount": { $lte: 50 } }, matches: ["failed"] },
  { name: "$regex on the path", filter: { path: { $regex: "^/orders/" } }, matches: ["paid", "failed"] },
  { name: "$regex with $options", filter: { "headers.content-type": { $regex: "^text/", $options: "i" } }, matches: ["text"] },
  { name: "query, first value", filter: { "query.env": "prod" }, matches: ["paid"] },
  { name: "query of a bare ?", filter: { "query.ping": "1" }, matches: ["ping"] },
  { name: "$and", filter: { $and: [{ method: "POST" }, { "headers.x-tenant": { $exists: true } }] }, matches: ["paid", "failed"] },
  { name: "$or", filter: { $or: [{ eventType: "invoice.failed" }, { method: "GET" }] }, matches: ["failed", "ping"] },
  { name: "$nor", filter: { $nor: [{ method: "POST" }, { method: "GET" }] }, matches: ["text"] },
  { name: "$not (absent fields match)", filter: { "body.data.currency": { $not: { $eq: "eur" } } }, matches: ["failed", "text", "binary", "ping"] },
  { name: "$elemMatch", filter: { "body.data.items": { $elemMatch: { sku: "A", qty: { $gte: 2 } } } }, matches: ["paid"] },
  { name: "$size", filter: { "body.data.items": { $size: 0 } }, matches: ["failed"] },
  { name: "a field of array elements", filter: { "body.data.items.sku": "B" }, matches: ["paid"] },
  { name: "a text body", filter: { body: "hello world" }, matches: ["text"] },
  { name: "a binary body is null", filter: { body: null }, matches: ["binary"] },
  { name: "an empty body is empty text", filter: { body: "" }, matches: ["ping"] },
  { name: "provider", filter: { provider: "generic" }, matches: ALL },
  { name: "verification", filter: { verification: "unverified" }, matches: ALL },
];

/** Filters refused when saved, with the field (below `filter`) and the reason the API answers. */
export const REFUSED_FILTERS: readonly { name: string; filter: unknown; field: string; reason: FieldReason }[] = [
  { name: "$where", filter: { $where: "this.method == 'POST'" }, field: "$where", reason: "unsupported_operator" },
  { name: "$expr", filter: { $expr: { $eq: ["$method", "POST"] } }, field: "$expr", reason: "unsupported_operator" },
  { name: "$function in a field", filter: { method: { $function: { body: "return 1", args: [], lang: "js" } } }, field: "method.$function", reason: "unsupported_operator" },
  { name: "$type", filter: { body: { $type: "object" } }, field: "body.$type", reason: "unsupported_operator" },
  { name: "$jsonSchema", filter: { $jsonSchema: {} }, field: "$jsonSchema", reason: "unsupported_operator" },
  { name: "$regex of unbounded backtracking", filter: { path: { $regex: "(a+)+$" } }, field: "path.$regex", reason: "format" },
  { name: "$in without an array", filter: { method: { $in: "POST" } }, field: "method.$in", reason: "type" },
  { name: "an operator mixed with fields", filter: { body: { $exists: true, a: 1 } }, field: "body", reason: "format" },
  { name: "__proto__", filter: { "headers.__proto__": "x" }, field: "headers.__proto__", reason: "format" },
  { name: "deeper than 10", filter: { a: { $eq: { b: { c: { d: { e: { f: { g: { h: { i: { j: 1 } } } } } } } } } } }, field: "", reason: "range" },
  { name: "over 16 KiB", filter: { $or: Array.from({ length: 600 }, (_, i) => ({ [`headers.x-${i}`]: "0123456789" })) }, field: "", reason: "length" },
];
