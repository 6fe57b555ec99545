import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { trace } from "@opentelemetry/api";
import type { EventSummaryJson } from "@whc/api-model";
import { createLogger } from "@whc/logging";
import { inSpan, startTracing, type Tracing } from "@whc/telemetry";
import { startNatsServer, startOtlpReceiver, waitFor, type NatsServer, type OtlpReceiver } from "@whc/testing";
import { createNatsBus } from "./nats-bus.js";
import { createNatsConnection } from "./nats-connection.js";

const logger = createLogger("test", "silent");
let nats: NatsServer;
let receiver: OtlpReceiver;
let tracing: Tracing;

beforeAll(async () => {
  nats = await startNatsServer();
  receiver = await startOtlpReceiver();
  tracing = startTracing("bus-test", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
});
afterAll(async () => {
  await tracing.close();
  await receiver.close();
  await nats.stop();
});

const summary = (id: string) => ({ id }) as EventSummaryJson;

describe("capture notifications over a real nats-server, traced", () => {
  it("carry the publisher's trace in message headers: a send span under the publisher's, a process span under it", async () => {
    const pub = createNatsBus(createNatsConnection(nats.url, "pub", logger), logger);
    const sub = createNatsBus(createNatsConnection(nats.url, "sub", logger), logger);
    try {
      const seen = new Map<string, string | undefined>();
      const off = sub.subscribeCaptures("acct", "ep", (n) => seen.set(n.summary.id, trace.getActiveSpan()?.spanContext().traceId));
      // Published until the subscription is in place; each publish in its own trace.
      const sent = new Map<string, { traceId: string; spanId: string }>();
      let n = 0;
      const id = await waitFor(
        async () => {
          const next = `e${++n}`;
          sent.set(
            next,
            await inSpan("publisher", {}, async (span) => {
              pub.publishCapture({ accountId: "acct", endpointId: "ep", summary: summary(next) });
              return span.spanContext();
            }),
          );
          return [...seen.keys()][0];
        },
        { what: "a notification", intervalMs: 20 },
      );
      off();
      const publisher = sent.get(id)!;
      expect(seen.get(id)).toBe(publisher.traceId);

      const spans = await waitFor(
        () => {
          const mine = receiver.spans().filter((s) => s.traceId === publisher.traceId);
          return mine.some((s) => s.kind === "consumer") ? mine : undefined;
        },
        { what: "the consumer span" },
      );
      const send = spans.find((s) => s.kind === "producer")!;
      const processed = spans.find((s) => s.kind === "consumer")!;
      expect(send).toMatchObject({ name: "send whc.capture", parentSpanId: publisher.spanId });
      expect(processed).toMatchObject({ name: "process whc.capture", parentSpanId: send.spanId });
      expect(processed.attributes).toMatchObject({ "messaging.system": "nats", "messaging.destination.name": "whc.capture.acct.ep" });
    } finally {
      await pub.close();
      await sub.close();
    }
  });
});
