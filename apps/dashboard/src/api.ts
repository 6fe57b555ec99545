/** The dashboard's only server: the public /v1 API, with the key the user pasted in. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string,
  ) {
    super(message);
  }
}

const KEY_STORAGE = "whc.apiKey";

export const keyStore = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  options: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<T> {
  const key = keyStore.get();
  const res = await fetch(`/v1${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: options.signal,
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    throw new ApiFailure(
      res.status,
      json?.error ?? String(res.status),
      json?.message ?? res.statusText,
      json?.requestId ?? res.headers.get("x-request-id") ?? "",
    );
  }
  return json as T;
}

export interface Endpoint {
  id: string;
  slug: string;
  displayName: string;
  webhookUrl: string;
  provider: string;
  secretSet: boolean;
  eventCount: number;
  status: string;
  operatingMode: string;
  replayFromDashboard: boolean;
}

export interface EventSummary {
  id: string;
  receivedAt: string;
  method: string;
  canonicalEventType?: string;
  provider: string;
  verification: string;
  verificationFailureReason?: string;
  responseCode: number;
  truncated: boolean;
  originalSizeBytes: number;
  decryption: string;
  readAt?: string;
}

export interface EventPage {
  items: EventSummary[];
  nextBefore?: string;
  nextBeforeId?: string;
  nextAfter?: string;
  nextAfterId?: string;
  searchExcludedMetadataOnlyCount?: number;
}

export interface EventDetail extends EventSummary {
  headers: Record<string, string[]>;
  remoteIp: string;
  body?: string;
  bodyEncoding?: "utf8" | "base64";
}
