import type { NewEvent, SchemaObservation, SealedBody } from "@whc/catalog-core";

/**
 * A batch of appends as it crosses to the store's thread, in a shape the structured clone
 * copies in a few blocks instead of value by value: every text field is an index into a table
 * of the batch's distinct strings (a batch is mostly one endpoint's captures, whose ids,
 * method, provider, verdict and diagnostic repeat), every number and index sits in one
 * Float64Array, and the bytes of every event's body, sealed request and search tokens follow
 * each other in one buffer. Cloning the events as rows of values cost 88 µs per batch of 25
 * for both threads, this 29 µs (docs/performance.md, "The append's hand-over").
 *
 * The bytes may be a view on shared memory (the store's own caller lends it: shared-bytes.ts),
 * which the message shares instead of copying. The rarely set parts (legacy headers,
 * deliveries, sequence statuses, redactions, dedupe) stay values, under their event's index,
 * and are cloned as they are.
 */
export interface EncodedAppend {
  /** The batch's distinct strings; `numbers` points into it. */
  strings: string[];
  /** FIELDS numbers per event (see `Field`). */
  numbers: Float64Array;
  /** Every event's byte parts, one after another (a view: its offset and length count). */
  bytes: Uint8Array;
  /** The batch's distinct wrapped data keys (one object per data key on the caller's side). */
  keys: Uint8Array[];
  /** The rare parts of the events that have any, by the event's index. */
  rare: Record<number, Rare>;
}

type Rare = Pick<NewEvent, "headers" | "sequenceStatuses" | "forward" | "redactionsJson" | "dedupe">;

/** The distinct values (strings, key objects) of a message, and the index of each in them (added when new). */
function table<T>() {
  const values: T[] = [];
  const index = new Map<T, number>();
  const at = (v: T): number => {
    let i = index.get(v);
    if (i === undefined) {
      i = values.push(v) - 1;
      index.set(v, i);
    }
    return i;
  };
  return { values, at };
}

/** Where each of an event's values sits in its run of `numbers`. */
const enum Field {
  Time,
  AccountId,
  EndpointId,
  Method,
  Path,
  RemoteIp,
  CanonicalEventType,
  Provider,
  Verification,
  VerificationFailureReason,
  DiagnosticJson,
  ForwardedResponseJson,
  ResponseCode,
  Truncated,
  OriginalSizeBytes,
  /** Its ciphertext's length in `bytes`; -1: no body. */
  BodyLength,
  BodyKey,
  BodyKeyId,
  /** Its ciphertext's length in `bytes`; -1: no sealed request. */
  RequestLength,
  RequestKey,
  RequestKeyId,
  TokensLength,
}
const FIELDS = Field.TokensLength + 1;

/**
 * The batch and each event's clock reading (`times[i]` for `events[i]`), encoded for a message;
 * its bytes written into the memory `bytesOf` gives for their length (shared-bytes.ts; by
 * default a typed array of its own: a slice of Node's pool would make the clone copy the pool).
 */
export function encodeAppend(
  events: readonly NewEvent[],
  times: readonly number[],
  bytesOf: (length: number) => Uint8Array = (length) => new Uint8Array(length),
): EncodedAppend {
  let total = 0;
  for (const e of events) total += (e.body?.ciphertext.length ?? 0) + (e.sealedRequest?.ciphertext.length ?? 0) + e.searchTokens.length;
  const bytes = bytesOf(total);
  const numbers = new Float64Array(events.length * FIELDS);
  const { values: strings, at: text } = table<string>();
  const { values: keys, at: key } = table<Uint8Array>();
  const rare: Record<number, Rare> = {};
  let at = 0;
  let n = 0;
  const put = (part: Uint8Array): number => {
    bytes.set(part, at);
    at += part.length;
    return part.length;
  };
  const sealed = (part: SealedBody | undefined, length: Field): void => {
    if (!part) {
      numbers[n + length] = -1;
      return;
    }
    numbers[n + length] = put(part.ciphertext);
    numbers[n + length + 1] = key(part.wrappedKey);
    numbers[n + length + 2] = text(part.keyId);
  };
  events.forEach((e, i) => {
    numbers[n + Field.Time] = times[i] ?? Number.NaN;
    numbers[n + Field.AccountId] = text(e.accountId);
    numbers[n + Field.EndpointId] = text(e.endpointId);
    numbers[n + Field.Method] = text(e.method);
    numbers[n + Field.Path] = text(e.path);
    numbers[n + Field.RemoteIp] = text(e.remoteIp);
    numbers[n + Field.CanonicalEventType] = text(e.canonicalEventType);
    numbers[n + Field.Provider] = text(e.provider);
    numbers[n + Field.Verification] = text(e.verification);
    numbers[n + Field.VerificationFailureReason] = text(e.verificationFailureReason);
    numbers[n + Field.DiagnosticJson] = text(e.diagnosticJson);
    numbers[n + Field.ForwardedResponseJson] = text(e.forwardedResponseJson);
    numbers[n + Field.ResponseCode] = e.responseCode;
    numbers[n + Field.Truncated] = e.truncated ? 1 : 0;
    numbers[n + Field.OriginalSizeBytes] = e.originalSizeBytes;
    sealed(e.body, Field.BodyLength);
    sealed(e.sealedRequest, Field.RequestLength);
    numbers[n + Field.TokensLength] = put(e.searchTokens);
    // An empty sequence and no redactions (as every capture without them arrives: [] and "")
    // mean what absent ones do, and cross as absent.
    const statuses = e.sequenceStatuses?.length ? e.sequenceStatuses : undefined;
    const redactionsJson = e.redactionsJson || undefined;
    if (e.headers.length > 0 || statuses !== undefined || e.forward !== undefined || redactionsJson !== undefined || e.dedupe !== undefined) {
      rare[i] = { headers: e.headers, sequenceStatuses: statuses, forward: e.forward, redactionsJson, dedupe: e.dedupe };
    }
    n += FIELDS;
  });
  return { strings, numbers, bytes, keys, rare };
}

/** The events again, their byte parts views on `bytes` (which they keep alive while in use), and their clock readings. */
export function decodeAppend({ strings, numbers, bytes, keys, rare }: EncodedAppend): { events: NewEvent[]; times: number[] } {
  let at = bytes.byteOffset;
  const take = (length: number): Uint8Array => {
    const view = new Uint8Array(bytes.buffer, at, length);
    at += length;
    return view;
  };
  const text = (i: number): string => strings[i] as string;
  const sealed = (n: number, length: Field): SealedBody | undefined =>
    (numbers[n + length] as number) < 0
      ? undefined
      : { ciphertext: take(numbers[n + length] as number), wrappedKey: keys[numbers[n + length + 1] as number] as Uint8Array, keyId: text(numbers[n + length + 2] as number) };
  const events: NewEvent[] = [];
  const times: number[] = [];
  for (let i = 0, n = 0; n < numbers.length; i += 1, n += FIELDS) {
    const body = sealed(n, Field.BodyLength);
    const sealedRequest = sealed(n, Field.RequestLength);
    const r = rare[i];
    times.push(numbers[n + Field.Time] as number);
    events.push({
      accountId: text(numbers[n + Field.AccountId] as number),
      endpointId: text(numbers[n + Field.EndpointId] as number),
      method: text(numbers[n + Field.Method] as number),
      path: text(numbers[n + Field.Path] as number),
      headers: r?.headers ?? [],
      remoteIp: text(numbers[n + Field.RemoteIp] as number),
      canonicalEventType: text(numbers[n + Field.CanonicalEventType] as number),
      provider: text(numbers[n + Field.Provider] as number),
      verification: text(numbers[n + Field.Verification] as number),
      verificationFailureReason: text(numbers[n + Field.VerificationFailureReason] as number),
      responseCode: numbers[n + Field.ResponseCode] as number,
      truncated: numbers[n + Field.Truncated] === 1,
      originalSizeBytes: numbers[n + Field.OriginalSizeBytes] as number,
      body,
      sealedRequest,
      searchTokens: take(numbers[n + Field.TokensLength] as number),
      diagnosticJson: text(numbers[n + Field.DiagnosticJson] as number),
      forwardedResponseJson: text(numbers[n + Field.ForwardedResponseJson] as number),
      sequenceStatuses: r?.sequenceStatuses,
      forward: r?.forward,
      redactionsJson: r?.redactionsJson,
      dedupe: r?.dedupe,
    });
  }
  return { events, times };
}

/**
 * Schema observations as they cross to the store's thread (learnSchemas), in the same shape as
 * a batch: a table of their distinct strings (a batch of a thousand mostly shares one shape's
 * text, one endpoint and a few event types) and one Float64Array of indexes and times, instead
 * of a thousand objects cloned key by key.
 */
export interface EncodedObservations {
  strings: string[];
  /** Per observation: its account, endpoint, event type, event id and shape (indexes into `strings`), and receivedAt. */
  numbers: Float64Array;
}

const OBSERVATION_FIELDS = 6;

export function encodeObservations(observations: readonly SchemaObservation[]): EncodedObservations {
  const { values: strings, at: text } = table<string>();
  const numbers = new Float64Array(observations.length * OBSERVATION_FIELDS);
  let n = 0;
  for (const o of observations) {
    numbers[n] = text(o.accountId);
    numbers[n + 1] = text(o.endpointId);
    numbers[n + 2] = text(o.eventType);
    numbers[n + 3] = text(o.eventId);
    numbers[n + 4] = text(o.shape);
    numbers[n + 5] = o.receivedAt;
    n += OBSERVATION_FIELDS;
  }
  return { strings, numbers };
}

export function decodeObservations({ strings, numbers }: EncodedObservations): SchemaObservation[] {
  const out: SchemaObservation[] = [];
  for (let n = 0; n < numbers.length; n += OBSERVATION_FIELDS) {
    out.push({
      accountId: strings[numbers[n] as number] as string,
      endpointId: strings[numbers[n + 1] as number] as string,
      eventType: strings[numbers[n + 2] as number] as string,
      eventId: strings[numbers[n + 3] as number] as string,
      shape: strings[numbers[n + 4] as number] as string,
      receivedAt: numbers[n + 5] as number,
    });
  }
  return out;
}
