import http from "node:http";
import type { AddressInfo } from "node:net";

/** OTLP's span kinds 1 to 5, by name. */
const KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;
export type SpanKindName = (typeof KINDS)[number];

/** One span as a test reads it from an OTLP/HTTP JSON export. */
export interface ReceivedSpan {
  /** `service.name` of the resource that exported it. */
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: SpanKindName;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
}

export interface OtlpReceiver {
  /** Base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (exports arrive at /v1/traces). */
  url: string;
  spans(): ReceivedSpan[];
  /** Export requests that were not JSON at /v1/traces (a test expects none). */
  rejected(): number;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? "";
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

/** Decodes an OTLP/JSON ExportTraceServiceRequest into flat spans. */
export function decodeOtlpJson(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        kind: KINDS[s.kind] ?? "unspecified",
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
      })),
    );
  });
}

/**
 * A plain OTLP/HTTP receiver on a loopback port: takes JSON exports at POST /v1/traces,
 * answers 200 with an empty partial-success object, keeps every span for the test to read.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let rejected = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const json = (req.headers["content-type"] ?? "").startsWith("application/json");
      if (req.method !== "POST" || req.url !== "/v1/traces" || !json) {
        rejected++;
        res.writeHead(415, { "content-type": "text/plain" }).end("JSON exports at POST /v1/traces only\n");
        return;
      }
      try {
        received.push(...decodeOtlpJson(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest));
      } catch {
        rejected++;
        res.writeHead(400, { "content-type": "text/plain" }).end("not an OTLP JSON export\n");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...received],
    rejected: () => rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
