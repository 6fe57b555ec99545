import type { NewEvent } from "@whc/catalog-core";

/**
 * A batch of appends as it crosses to the store's thread: each event a row of its values in a
 * fixed order, and the bytes of every event's body, sealed request and search tokens copied into
 * one buffer. The structured clone of the events themselves wrote every key of every event and
 * gave each of their byte arrays a buffer of its own on the other side: about 13 µs per event
 * for both threads, against 4 µs this way (docs/performance.md, "One seal, and the append handed
 * over encoded").
 *
 * The buffer is cloned with the message, not transferred: transferring measured no cheaper end
 * to end, and under load the builds that transferred ran 18-24 full collections of the sending
 * heap in 12 s, against 0-16 for those that clone (the count swings from run to run). One copy
 * of a batch's bytes is a few microseconds.
 *
 * The rarely set parts (legacy headers, deliveries, sequence statuses, dedupe) stay values of
 * the row and are cloned as they are. The data key's wrapped bytes are one object for every
 * event sealed under it, which a clone writes once per message.
 */
export interface EncodedAppend {
  rows: Row[];
  /** Every event's byte parts, one after another. */
  bytes: Uint8Array;
}

type Row = [
  accountId: string,
  endpointId: string,
  method: string,
  path: string,
  headers: NewEvent["headers"],
  remoteIp: string,
  canonicalEventType: string,
  provider: string,
  verification: string,
  verificationFailureReason: string,
  responseCode: number,
  truncated: boolean,
  originalSizeBytes: number,
  body: SealedRef | undefined,
  sealedRequest: SealedRef | undefined,
  searchTokens: number,
  diagnosticJson: string,
  forwardedResponseJson: string,
  sequenceStatuses: NewEvent["sequenceStatuses"],
  forward: NewEvent["forward"],
  redactionsJson: NewEvent["redactionsJson"],
  dedupe: NewEvent["dedupe"],
];

/** A sealed part: the length of its ciphertext in `bytes` (parts follow each other), its key. */
type SealedRef = [length: number, wrappedKey: Uint8Array, keyId: string];

/** The batch encoded, for a message (cloned with it, never in a transfer list: see above). */
export function encodeAppend(events: readonly NewEvent[]): EncodedAppend {
  let total = 0;
  for (const e of events) total += (e.body?.ciphertext.length ?? 0) + (e.sealedRequest?.ciphertext.length ?? 0) + e.searchTokens.length;
  // A typed array of its own: a slice of Node's pool would make the clone copy the whole pool.
  const bytes = new Uint8Array(total);
  let at = 0;
  const put = (part: Uint8Array): number => {
    bytes.set(part, at);
    at += part.length;
    return part.length;
  };
  const rows = events.map((e): Row => {
    const body: SealedRef | undefined = e.body && [put(e.body.ciphertext), e.body.wrappedKey, e.body.keyId];
    const request: SealedRef | undefined = e.sealedRequest && [put(e.sealedRequest.ciphertext), e.sealedRequest.wrappedKey, e.sealedRequest.keyId];
    return [
      e.accountId,
      e.endpointId,
      e.method,
      e.path,
      e.headers,
      e.remoteIp,
      e.canonicalEventType,
      e.provider,
      e.verification,
      e.verificationFailureReason,
      e.responseCode,
      e.truncated,
      e.originalSizeBytes,
      body,
      request,
      put(e.searchTokens),
      e.diagnosticJson,
      e.forwardedResponseJson,
      e.sequenceStatuses,
      e.forward,
      e.redactionsJson,
      e.dedupe,
    ];
  });
  return { rows, bytes };
}

/** The events again, their byte parts views on `bytes` (which they keep alive while in use). */
export function decodeAppend({ rows, bytes }: EncodedAppend): NewEvent[] {
  let at = bytes.byteOffset;
  const take = (length: number): Uint8Array => {
    const view = new Uint8Array(bytes.buffer, at, length);
    at += length;
    return view;
  };
  return rows.map((r) => {
    const [body, request] = [r[13], r[14]];
    const bodyPart = body && { ciphertext: take(body[0]), wrappedKey: body[1], keyId: body[2] };
    const requestPart = request && { ciphertext: take(request[0]), wrappedKey: request[1], keyId: request[2] };
    return {
      accountId: r[0],
      endpointId: r[1],
      method: r[2],
      path: r[3],
      headers: r[4],
      remoteIp: r[5],
      canonicalEventType: r[6],
      provider: r[7],
      verification: r[8],
      verificationFailureReason: r[9],
      responseCode: r[10],
      truncated: r[11],
      originalSizeBytes: r[12],
      body: bodyPart,
      sealedRequest: requestPart,
      searchTokens: take(r[15]),
      diagnosticJson: r[16],
      forwardedResponseJson: r[17],
      sequenceStatuses: r[18],
      forward: r[19],
      redactionsJson: r[20],
      dedupe: r[21],
    };
  });
}
