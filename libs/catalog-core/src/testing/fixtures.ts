import { randomUUID, createHash } from "node:crypto";
import { packSearchTokens } from "@whc/sealing";
import type { AuditRecord, EndpointRecord, AttemptRecord, EventQuery, NewEvent } from "../types.js";
import type { CatalogStore } from "../ports.js";
import { newId } from "../ids.js";

export function keyHash(text: string): Uint8Array {
  return createHash("sha256").update(text).digest();
}

/** A deterministic stand-in for a blind-index token (the store treats tokens as opaque). */
export function token(word: string): Uint8Array {
  return createHash("sha256").update(`token:${word.toLowerCase()}`).digest().subarray(0, 8);
}

export function endpointFixture(accountId: string, overrides: Partial<EndpointRecord> = {}): EndpointRecord {
  const now = Date.now();
  return {
    id: newId(),
    accountId,
    slug: `ep-${randomUUID().slice(0, 8)}`,
    displayName: "Test endpoint",
    operatingMode: "capture",
    status: "active",
    replayFromDashboard: true,
    replayFromApi: true,
    provider: "generic",
    sealedSecret: undefined,
    genericSignatureHeader: "",
    genericSignaturePrefix: "",
    source: "api",
    createdAt: now,
    updatedAt: now,
    eventCount: 0,
    purgedEventCount: 0,
    responseJson: "",
    sequenceCounter: 0,
    forwardJson: "",
    inboundJson: "",
    rejectedCount: 0,
    redactJson: "",
    dedupeJson: "",
    ...overrides,
  };
}

export function eventFixture(
  endpoint: Pick<EndpointRecord, "id" | "accountId">,
  overrides: Partial<NewEvent> & { words?: string[] } = {},
): NewEvent {
  const { words = ["hello", "world"], ...rest } = overrides;
  return {
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    method: "POST",
    path: "",
    headers: [
      ["Content-Type", "application/json"],
      ["X-Repeat", "one"],
      ["X-Repeat", "two"],
    ],
    remoteIp: "127.0.0.1",
    canonicalEventType: "invoice.paid",
    provider: "generic",
    verification: "unverified",
    verificationFailureReason: "",
    responseCode: 200,
    truncated: false,
    originalSizeBytes: 10,
    body: { ciphertext: new Uint8Array([1, 2, 3, 0, 255]), wrappedKey: new Uint8Array([9, 9]), keyId: "k1" },
    searchTokens: packSearchTokens(words.map(token)),
    diagnosticJson: "{}",
    forwardedResponseJson: "{}",
    ...rest,
  };
}

/** An attempt as the outbox worker records it: a 500 with a sealed excerpt, unless overridden. */
export function forwardAttemptFixture(n: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    n,
    trigger: n === 1 ? "initial" : "retry",
    at: 1_800_000_000_000 + n,
    url: "https://app.example.test/hooks/ci?x=1",
    durationMs: 41,
    status: 500,
    headers: [
      ["Content-Type", "text/plain"],
      ["Set-Cookie", "a=1"],
      ["Set-Cookie", "b=2"],
    ],
    body: { ciphertext: new Uint8Array([0, 1, 2, 255, n]), wrappedKey: new Uint8Array([8, 8]), keyId: "k2" },
    bodyTruncated: false,
    error: "",
    requestSha256: "",
    message: "",
    ...overrides,
  };
}

/** An audit entry of `accountId` (an API key's action on nothing in particular unless overridden). */
export function auditFixture(accountId: string, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: newId(),
    accountId,
    at: 1_800_000_000_000,
    action: "event.read",
    keyId: "01a20000-0000-7000-8000-0000000000c1",
    keyPrefix: "whc_abcdef",
    remoteIp: "203.0.113.7",
    requestId: "req-1",
    endpointId: undefined,
    eventId: undefined,
    details: {},
    ...overrides,
  };
}

/** Every event a query lists, page after page (older ones through `before`), in the order listed. */
export async function listAllPages(store: Pick<CatalogStore, "listEvents">, q: EventQuery): Promise<string[]> {
  const ids: string[] = [];
  let before = q.before;
  for (let i = 0; i < 100; i += 1) {
    const page = await store.listEvents({ ...q, before });
    ids.push(...page.events.map((e) => e.id));
    if (!page.hasOlder) break;
    const last = page.events[page.events.length - 1]!;
    before = { receivedAt: last.receivedAt, id: last.id };
  }
  return ids;
}
