import { afterAll, beforeAll, describe, expect, it } from "vitest";
import path from "node:path";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { AppError } from "@whc/errors";
import { requestContext } from "@whc/logging";
import { startTracing, type Tracing } from "@whc/telemetry";
import { startOtlpReceiver, tempDir, waitFor, type OtlpReceiver } from "@whc/testing";
import { endpointFixture } from "./testing/fixtures.js";
import { tracedStore } from "./traced-store.js";

let receiver: OtlpReceiver;
let tracing: Tracing;
const dir = tempDir("whc-traced-store-");

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await tracing?.close();
  await receiver.close();
  dir.remove();
});

describe("tracedStore", () => {
  it("is the store itself while tracing is off: nothing in between", () => {
    const store = openSqliteStore({ file: path.join(dir.path, "off.db") });
    expect(tracedStore(store)).toBe(store);
    void store.close();
  });

  it("makes a span per operation with the request id, keeping results and the store's own errors", async () => {
    tracing = startTracing("catalog-test", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
    const store = tracedStore(openSqliteStore({ file: path.join(dir.path, "on.db") }));
    expect(store.kind).toBe("sqlite");
    const endpoint = endpointFixture("acct", { slug: "traced" });
    const failure = await requestContext.run({ requestId: "req-store" }, async () => {
      await store.createEndpoint(endpoint);
      expect((await store.listEndpoints("acct")).map((e) => e.id)).toEqual([endpoint.id]);
      return store.createEndpoint({ ...endpointFixture("acct"), slug: "traced" }).catch((err: unknown) => err);
    });
    expect(AppError.is(failure) && failure.reason).toBe("slug_taken");
    await store.close();

    const spans = await waitFor(() => (receiver.spans().length >= 4 ? receiver.spans() : undefined), { what: "four spans" });
    expect(spans.map((s) => s.name)).toEqual([
      "CatalogStore.createEndpoint",
      "CatalogStore.listEndpoints",
      "CatalogStore.createEndpoint",
      "CatalogStore.close",
    ]);
    expect(spans[1]!.attributes).toEqual({ "db.system.name": "sqlite", "db.operation.name": "listEndpoints", "whc.request_id": "req-store" });
    expect(spans[2]!.attributes).toMatchObject({ "error.type": "slug_taken" });
    expect(spans[3]!.attributes["whc.request_id"]).toBeUndefined();
  });
});
