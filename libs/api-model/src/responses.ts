import { z } from "zod";
import { headerName } from "./common.js";

/**
 * What a receiving endpoint answers (docs/design.md §10): a default answer, ordered rules, a
 * sequence counted by the catalog, and the providers' verification handshakes.
 */

/** Headers a configured answer may not set: the server frames the message itself. */
export const FRAMING_HEADERS = ["content-length", "transfer-encoding", "connection", "host"] as const;
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;
export const MAX_RESPONSE_HEADERS = 32;
export const MAX_RESPONSE_DELAY_MS = 30_000;
export const MAX_RULES = 50;
export const MAX_SEQUENCE = 50;

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

const answerStatus = z.int().min(200).max(599);
/** A header value: visible characters and spaces only, so no value can start another header. */
const headerValue = z.string().max(4096).regex(/^[\t\x20-\x7e\x80-\xff]*$/);
const answerHeaders = z
  .record(headerName, headerValue)
  .refine((h) => Object.keys(h).length <= MAX_RESPONSE_HEADERS, { message: `at most ${MAX_RESPONSE_HEADERS} headers` })
  .refine((h) => Object.keys(h).every((name) => !(FRAMING_HEADERS as readonly string[]).includes(name.toLowerCase())), {
    message: `${FRAMING_HEADERS.join(", ")} cannot be set`,
  });
const answerBody = z.string().refine((b) => utf8Length(b) <= MAX_RESPONSE_BODY_BYTES, { message: "at most 64 KiB" });
const delayMs = z.int().min(0).max(MAX_RESPONSE_DELAY_MS);

const answerFields = {
  status: answerStatus.optional(),
  headers: answerHeaders.optional(),
  body: answerBody.optional(),
  delayMs: delayMs.optional(),
};

/** One answer: any field left out takes the endpoint's top-level value, then the default. */
export const responseAnswer = z.strictObject(answerFields);
export type ResponseAnswer = z.infer<typeof responseAnswer>;

/** `/` then segments; `*` stands for one segment, `**` (last) for any rest. */
const pathPattern = z.string().max(512).regex(/^\/[^\s?#]*$/);

export const responseMatch = z.strictObject({
  method: z
    .string()
    .regex(/^[A-Za-z]{1,20}$/)
    .optional(),
  path: pathPattern.optional(),
  eventType: z.string().min(1).max(200).optional(),
  header: z.strictObject({ name: headerName, equals: z.string().max(4096) }).optional(),
});
export type ResponseMatch = z.infer<typeof responseMatch>;

export const responseRule = z.strictObject({ match: responseMatch, ...answerFields });
export type ResponseRule = z.infer<typeof responseRule>;

/** An endpoint's `response`, as given on create or update and as the Endpoint shows it. */
export const endpointResponseConfig = z.strictObject({
  ...answerFields,
  rules: z.array(responseRule).max(MAX_RULES).optional(),
  sequence: z.array(responseAnswer).min(1).max(MAX_SEQUENCE).optional(),
  handshakes: z.boolean().optional(),
});
export type EndpointResponseConfig = z.infer<typeof endpointResponseConfig>;
