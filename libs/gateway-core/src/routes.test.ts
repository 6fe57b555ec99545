import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type Router from "@koa/router";
import { startTestGateway, type TestGateway } from "./test-gateway.js";

type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

let t: TestGateway;
let doc: Json;
let mounted: Set<string>;

/** The router createGatewayApp mounted: @koa/router marks its dispatch middleware with it. */
function mountedRouter(): Router {
  const dispatchers = t.app.middleware.filter((m) => (m as { router?: Router }).router !== undefined);
  expect(dispatchers).toHaveLength(1);
  return (dispatchers[0] as unknown as { router: Router }).router;
}

/** `GET /v1/endpoints/{id}` for every method of every layer (HEAD is Koa's automatic twin of GET). */
function routedOperations(router: Router): Set<string> {
  const out = new Set<string>();
  for (const layer of router.stack) {
    expect(typeof layer.path).toBe("string");
    const path = String(layer.path).replace(/:([A-Za-z]+)/g, "{$1}");
    for (const method of layer.methods) if (method !== "HEAD") out.add(`${method} ${path}`);
  }
  return out;
}

function documentedOperations(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of Object.keys(item as Json)) if (METHODS.includes(method)) out.add(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

beforeAll(async () => {
  t = await startTestGateway();
  const res = await fetch(`${t.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Json;
  mounted = routedOperations(mountedRouter());
});
afterAll(async () => {
  await t.close();
});

describe("the route table", () => {
  it("documents every path and method the router mounts", () => {
    expect(mounted.size).toBeGreaterThanOrEqual(13);
    const documented = documentedOperations();
    for (const op of mounted) expect(documented.has(op), `${op} is routed but not documented`).toBe(true);
  });

  it("routes every documented operation", () => {
    const documented = documentedOperations();
    for (const op of documented) expect(mounted.has(op), `${op} is documented but not routed`).toBe(true);
    // The interface's nine operations are among them.
    for (const op of [
      "GET /v1/endpoints",
      "POST /v1/endpoints",
      "GET /v1/endpoints/{id}",
      "DELETE /v1/endpoints/{id}",
      "GET /v1/endpoints/{endpointId}/events",
      "GET /v1/endpoints/{endpointId}/events/{eventId}",
      "DELETE /v1/endpoints/{endpointId}/events/{eventId}",
      "GET /v1/endpoints/{endpointId}/events/{eventId}/curl",
      "POST /v1/endpoints/{endpointId}/events/{eventId}/replay",
    ]) {
      expect(documented.has(op), op).toBe(true);
    }
  });

  it("gives every operation a unique operationId", () => {
    const ids: string[] = [];
    for (const item of Object.values(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (!METHODS.includes(method)) continue;
        expect(typeof op.operationId, method).toBe("string");
        ids.push(op.operationId as string);
      }
    }
    expect(ids.length).toBe(documentedOperations().size);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names only schemas that exist in components, success answers included", () => {
    const schemas = doc.components.schemas as Json;
    let successRefs = 0;
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (!METHODS.includes(method)) continue;
        for (const [status, response] of Object.entries(op.responses as Json)) {
          for (const media of Object.values(((response as Json).content ?? {}) as Json)) {
            const ref = (media as Json).schema?.$ref as string | undefined;
            if (ref === undefined) continue;
            expect(ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
            expect(schemas[ref.split("/").pop()!], `${method} ${path} ${status}: ${ref}`).toBeDefined();
            if (status.startsWith("2")) successRefs += 1;
          }
        }
      }
    }
    expect(successRefs).toBeGreaterThanOrEqual(9);
    // Refs inside the components (nested shapes) resolve too.
    const all = JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g);
    for (const [, name] of all) expect(schemas[name!], name).toBeDefined();
  });

  it("is an OpenAPI 3.1 document numbered 0.1.0, the interface's own number", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("0.1.0");
  });
});
