import { describe, it, expect } from "vitest";
import { Writable } from "node:stream";
import { inSpan, startTracing } from "@whc/telemetry";
import { startOtlpReceiver } from "@whc/testing";
import { createLogger, requestContext } from "./index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, stream };
}

describe("logger", () => {
  it("stamps every line with the request id in progress", async () => {
    const { lines, stream } = capture();
    const logger = createLogger("svc", "info", stream);
    await requestContext.run({ requestId: "r-1" }, async () => logger.info("inside"));
    logger.info("outside");
    expect(lines[0]).toMatchObject({ service: "svc", requestId: "r-1", msg: "inside" });
    expect(lines[1]!.requestId).toBeUndefined();
  });

  it("redacts secrets, keys and bodies whoever passes them", () => {
    const { lines, stream } = capture();
    createLogger("svc", "info", stream).info(
      { secret: "s3cr3t", body: "payload", req: { headers: { authorization: "Bearer whc_x" } }, target_secret: "t" },
      "x",
    );
    const text = JSON.stringify(lines[0]);
    for (const leaked of ["s3cr3t", "payload", "whc_x", '"t"']) expect(text).not.toContain(leaked);
  });

  it("carries the trace and span ids of the active span when tracing is on, and none without a span", async () => {
    const receiver = await startOtlpReceiver();
    const tracing = startTracing("svc", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const { lines, stream } = capture();
      const logger = createLogger("svc", "info", stream);
      const ids = await requestContext.run({ requestId: "r-2" }, () =>
        inSpan("work", {}, async (span) => {
          logger.info("inside");
          return span.spanContext();
        }),
      );
      logger.info("outside");
      expect(lines[0]).toMatchObject({ requestId: "r-2", trace_id: ids.traceId, span_id: ids.spanId });
      expect(lines[1]!.trace_id).toBeUndefined();
    } finally {
      await tracing.close();
      await receiver.close();
    }
  });
});
