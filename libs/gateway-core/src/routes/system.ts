import type { Client } from "@connectrpc/connect";
import { CatalogService, CryptoService, ReplayService, type Health } from "@whc/contracts";
import { health, providerList, readiness, type HealthJson, type ProviderListJson, type ReadinessJson } from "@whc/api-model";
import { providerCatalog } from "@whc/signatures";
import type { GatewayDeps } from "../deps.js";
import { route, type Route } from "../route.js";

/**
 * Whether a peer's service answers: asked by its own name, not as `""`, which is the peer's
 * readiness, its own dependencies included (replay's NATS), which /readyz names by itself.
 */
async function serving(client: Client<typeof Health>, service: string): Promise<boolean> {
  try {
    return (await client.check({ service }, { timeoutMs: 2000 })).status === 1;
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

/**
 * Health, readiness, the OpenAPI document and the provider list. Metrics are not here: the
 * process serves them on its internal metrics port.
 */
export function systemRoutes(deps: GatewayDeps, document: () => Record<string, unknown>): Route[] {
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
          serving(deps.health.catalog, CatalogService.typeName),
          serving(deps.health.crypto, CryptoService.typeName),
          serving(deps.health.replay, ReplayService.typeName),
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
      path: "/readyz",
      operationId: "readiness",
      summary: "Check the gateway's readiness",
      description:
        "200 when every dependency answers now (the catalog, crypto and replay services and, in a distributed deployment, NATS); " +
        "503 naming the failing ones in `failing`. `/healthz` stays the liveness check. Needs no API key.",
      tags: ["system"],
      open: true,
      extension: true,
      success: { status: 200, schema: readiness, description: "Every dependency answers: catalog, crypto, replay and, in a distributed deployment, NATS." },
      errors: [],
      otherResponses: {
        "503": {
          description: "A dependency does not answer; `failing` names it.",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Readiness" } } },
        },
      },
      async handler(ctx): Promise<ReadinessJson> {
        const report = await deps.readiness.check();
        ctx.status = report.status === "ok" ? 200 : 503;
        return report;
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
      scope: "any",
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
