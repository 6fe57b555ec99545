/** Domain records of the catalog. Times are milliseconds since the Unix epoch. */

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  accountName: string;
  prefix: string;
  keyHash: Uint8Array;
  createdAt: number;
  revokedAt?: number | undefined;
}

export type OperatingMode = "capture" | "metadata_only";
export type EndpointStatus = "active" | "paused";

export interface EndpointRecord {
  id: string;
  accountId: string;
  slug: string;
  displayName: string;
  operatingMode: string;
  status: string;
  replayFromDashboard: boolean;
  replayFromApi: boolean;
  provider: string;
  sealedSecret?: Uint8Array | undefined;
  genericSignatureHeader: string;
  genericSignaturePrefix: string;
  source: string;
  createdAt: number;
  updatedAt: number;
  eventCount: number;
  lastEventAt?: number | undefined;
  lastPurgedAt?: number | undefined;
  purgedEventCount: number;
}

export interface SealedBody {
  ciphertext: Uint8Array;
  wrappedKey: Uint8Array;
  keyId: string;
}

export type HeaderPair = readonly [name: string, value: string];

/** What ingest hands over; the catalog assigns id and receivedAt at commit. */
export interface NewEvent {
  accountId: string;
  endpointId: string;
  method: string;
  path: string;
  headers: HeaderPair[];
  remoteIp: string;
  canonicalEventType: string;
  provider: string;
  verification: string;
  verificationFailureReason: string;
  responseCode: number;
  truncated: boolean;
  originalSizeBytes: number;
  /** Absent: only metadata was stored. */
  body?: SealedBody | undefined;
  searchTokens: Uint8Array[];
  diagnosticJson: string;
  forwardedResponseJson: string;
}

export interface EventRecord extends Omit<NewEvent, "searchTokens"> {
  id: string;
  receivedAt: number;
  readAt?: number | undefined;
}

/** The list view leaves out the heavy parts. */
export type EventSummaryRecord = Omit<EventRecord, "headers" | "body" | "diagnosticJson" | "forwardedResponseJson"> & {
  bodyStored: boolean;
  keyId?: string | undefined;
};

export interface Cursor {
  receivedAt: number;
  id: string;
}

export interface EventQuery {
  accountId: string;
  endpointId: string;
  before?: Cursor | undefined;
  after?: Cursor | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  eventType?: string | undefined;
  provider?: string | undefined;
  responseCode?: number | undefined;
  verification?: string | undefined;
  /** Present (even empty) when the caller searched: metadata-only events are left out. */
  searchTokens?: Uint8Array[] | undefined;
  limit: number;
}

export interface EventPage {
  /** Newest first. */
  events: EventSummaryRecord[];
  /** Events older than the last returned one also match. */
  hasOlder: boolean;
  searchExcludedMetadataOnlyCount: number;
}

export interface ReplayCharge {
  allowed: boolean;
  used: number;
}

export interface ReplayAuditRecord {
  id: string;
  accountId: string;
  endpointId: string;
  eventId: string;
  keyId: string;
  targetUrl: string;
  mode: string;
  result: string;
  targetStatus: number;
  networkFailureReason: string;
  durationMs: number;
  createdAt: number;
  requestId: string;
  client: string;
}

/** Assigns ids and times at commit; adapters call it inside their serialized write. */
export interface Stamp {
  id: string;
  receivedAt: number;
}
