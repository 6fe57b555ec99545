import { describe, it, expect, afterEach } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { context, trace } from "@opentelemetry/api";
import { ConfigError } from "@whc/config";
import { startOtlpReceiver, waitFor, type OtlpReceiver } from "@whc/testing";
import { inSpan, runInHttpServerSpan, startTracing, tracesUrl, tracingActive, type Tracing } from "./index.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

async function tracingTo(receiver: OtlpReceiver, env: Record<string, string> = {}): Promise<Tracing> {
  const tracing = startTracing("unit", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20", ...env });
  open.push(tracing);
  return tracing;
}

async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  open.push(r);
  return r;
}

describe("startTracing", () => {
  it("registers nothing without an OTLP endpoint: no provider, no context, no recording spans", async () => {
    const tracing = startTracing("unit", { OTEL_SERVICE_NAME: "ignored", OTEL_BSP_SCHEDULE_DELAY: "20" });
    expect(tracing.enabled).toBe(false);
    expect(tracingActive()).toBe(false);
    const span = trace.getTracer("x").startSpan("nothing");
    expect(span.isRecording()).toBe(false);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
    // No context manager either: a span made current is gone inside the callback.
    context.with(trace.setSpan(context.active(), span), () => expect(trace.getActiveSpan()).toBeUndefined());
    await tracing.close();
  });

  it("finds the traces URL the standard variables name, and refuses a bad one by its name", () => {
    expect(tracesUrl({})).toBeUndefined();
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe("http://127.0.0.1:4318/v1/traces");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/" })).toBe("http://127.0.0.1:4318/v1/traces");
    expect(
      tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/custom" }),
    ).toBe("http://127.0.0.1:4318/custom");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    const bad = (() => {
      try {
        tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" });
      } catch (err) {
        return err;
      }
    })();
    expect(ConfigError.is(bad) && bad.variable).toBe("OTEL_EXPORTER_OTLP_ENDPOINT");
    expect(() => startTracing("unit", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_BSP_SCHEDULE_DELAY: "soon" })).toThrow(
      /OTEL_BSP_SCHEDULE_DELAY/,
    );
  });

  it("exports nested spans over OTLP/HTTP JSON with the service's name, parents kept across awaits", async () => {
    const r = await receiver();
    const tracing = await tracingTo(r);
    expect(tracing.enabled).toBe(true);
    expect(tracingActive()).toBe(true);
    await inSpan("outer", {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await inSpan("inner", {}, async () => undefined);
    });
    const spans = await waitFor(() => (r.spans().length >= 2 ? r.spans() : undefined), { what: "two spans" });
    const outer = spans.find((s) => s.name === "outer")!;
    const inner = spans.find((s) => s.name === "inner")!;
    expect(outer.service).toBe("unit");
    expect(outer.parentSpanId).toBe("");
    expect(inner).toMatchObject({ traceId: outer.traceId, parentSpanId: outer.spanId });
    expect(r.rejected()).toBe(0);
  });

  it("names the service from OTEL_SERVICE_NAME and flushes what is buffered on close", async () => {
    const r = await receiver();
    // A schedule longer than the test: only close() can have sent the span.
    const tracing = startTracing("unit", { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_BSP_SCHEDULE_DELAY: "600000", OTEL_SERVICE_NAME: "renamed" });
    await inSpan("buffered", {}, async () => undefined);
    expect(r.spans()).toEqual([]);
    await tracing.close();
    expect(r.spans().map((s) => [s.service, s.name])).toEqual([["renamed", "buffered"]]);
    expect(tracingActive()).toBe(false);
  });

  it("continues a caller's traceparent in a node:http server span, its callbacks included", async () => {
    const r = await receiver();
    await tracingTo(r);
    let seenInBody: string | undefined;
    const server = http.createServer((req, res) =>
      runInHttpServerSpan(req, res, "/things/{id}", () => {
        req.on("data", () => undefined);
        req.on("end", () => {
          seenInBody = trace.getActiveSpan()?.spanContext().traceId;
          res.writeHead(503).end();
        });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/things/1?token=secret`, {
      method: "POST",
      body: "x".repeat(100_000),
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(503);
    const span = await waitFor(() => r.spans().find((s) => s.kind === "server"), { what: "the server span" });
    expect(seenInBody).toBe(traceId);
    expect(span).toMatchObject({ traceId, parentSpanId: "00f067aa0ba902b7", name: "POST /things/{id}" });
    expect(span.attributes).toMatchObject({ "http.route": "/things/{id}", "url.path": "/things/1", "http.response.status_code": 503, "error.type": "503" });
    expect(JSON.stringify(span)).not.toContain("secret");
  });
});
