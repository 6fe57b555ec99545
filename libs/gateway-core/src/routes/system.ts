import type { Client } from "@connectrpc/connect";
import type { Health } from "@whc/contracts";
import { health, providerList, type HealthJson, type ProviderListJson } from "@whc/api-model";
import { providerCatalog } from "@whc/signatures";
import type { GatewayDeps } from "../deps.js";
import { route, type Route } from "../route.js";

async function serving(client: Client<typeof Health>): Promise<boolean> {
  try {
    return (await client.check({ service: "" }, { timeoutMs: 2000 })).status === 1;
  } catch {
    return false;
  }
}

/** The registry's providers, as plain data; computed once. */
function providers(): ProviderListJson {
  return {
    items: providerCatalog().map((p) => ({
      name: p.name,
      label: p.label,
      signs: p.signs,
      signatureHeaders: [...p.signatureHeaders],
      ...(p.toleranceS !== undefined ? { toleranceSeconds: p.toleranceS } : {}),
      secretFormat: { ...p.secretFormat },
      sampleEventTypes: [...p.sampleEventTypes],
    })),
  };
}

/** Health, metrics, the OpenAPI document and the provider list. */
export function systemRoutes(deps: GatewayDeps, document: () => Record<string, unknown>, metrics: () => Promise<{ type: string; text: string }>): Route[] {
  const providerList_ = providers();
  return [
    route({
      method: "GET",
      path: "/healthz",
      operationId: "health",
      summary: "Check the gateway's health",
      description:
        "Answers 200 when the catalog, crypto and replay services each answer a health check within 2 s, else 503 with " +
        "the same body naming the one that is `down`: for load balancers and liveness probes. `bus` shows whether the " +
        "capture bus (NATS, or the in-process bus) is connected; it does not fail the check, since long polls fall back " +
        "to re-querying without it. Needs no API key.",
      tags: ["system"],
      open: true,
      extension: true,
      success: { status: 200, schema: health, description: "Every dependency answers." },
      errors: [],
      otherResponses: {
        "503": { description: "A dependency does not answer.", content: { "application/json": { schema: { $ref: "#/components/schemas/Health" } } } },
      },
      async handler(ctx): Promise<HealthJson> {
        const [catalog, crypto, replay] = await Promise.all([
          serving(deps.health.catalog),
          serving(deps.health.crypto),
          serving(deps.health.replay),
        ]);
        const ok = catalog && crypto && replay;
        ctx.status = ok ? 200 : 503;
        return {
          status: ok ? "ok" : "unavailable",
          checks: {
            catalog: catalog ? "ok" : "down",
            crypto: crypto ? "ok" : "down",
            replay: replay ? "ok" : "down",
            bus: deps.bus.connected() ? "ok" : "down",
          },
        };
      },
    }),
    route({
      method: "GET",
      path: "/metrics",
      operationId: "metrics",
      summary: "Read the gateway's Prometheus metrics",
      description:
        "Request counts and latencies by method, route template (never a raw path: ids would make every request a series) " +
        "and status, and the process's own metrics, in the Prometheus text format. In the all-in-one process it also " +
        "carries the forwarding series of the replay service that runs beside the gateway. Needs no API key.",
      tags: ["system"],
      open: true,
      extension: true,
      success: { status: 200, contentType: "text/plain", description: "Prometheus metrics of the gateway." },
      errors: [],
      async handler(ctx) {
        const { type, text } = await metrics();
        ctx.type = type;
        return text;
      },
    }),
    route({
      method: "GET",
      path: "/v1/openapi.json",
      operationId: "openApiDocument",
      summary: "Get this OpenAPI document",
      description:
        "This document, generated from the gateway's route table and the schemas it validates requests with, so it " +
        "describes the running version exactly. The `/v1` operations' server is relative (the address you fetched the " +
        "document from); the receiving operations name this deployment's `WHC_INGEST_PUBLIC_URL`. Needs no API key.",
      tags: ["system"],
      open: true,
      extension: true,
      success: { status: 200, description: "This document." },
      errors: [],
      handler: () => document(),
    }),
    route({
      method: "GET",
      path: "/v1/providers",
      operationId: "listProviders",
      summary: "List the signature providers",
      description:
        "The signature schemes endpoints can verify, in the order detection tries them: each one's `name` (the value of " +
        "an endpoint's `provider`), what it signs, its signature headers, its timestamp tolerance and the format of its " +
        "secret, with an example, and the sample events `POST /v1/endpoints/{id}/trigger` can send for it " +
        "(`sampleEventTypes`). The create and update operations accept exactly these names.",
      tags: ["system"],
      extension: true,
      success: { status: 200, schema: providerList, description: "The signature schemes endpoints can verify, and how to set each one's secret." },
      errors: [],
      handler: () => providerList_,
    }),
  ];
}
