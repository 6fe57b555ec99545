import { describe, it, expect, beforeAll, afterAll } from "vitest";
import type Router from "@koa/router";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { startTestGateway, type TestGateway } from "./testing/index.js";

type Json = Record<string, any>;
// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
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

/** The gateway's operations: the receiving surface's name their own server (ingest). */
function documentedOperations(): Set<string> {
  const out = new Set<string>();
  for (const { where, op } of operations()) if (!op.servers) out.add(where);
  return out;
}

/** Every operation of the document, the receiving surface's included. */
function operations(): { where: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op: op as Json })),
  );
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
    expect(ids.length).toBe(operations().length);
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

describe("the document's own documentation", () => {
  it("gives every operation a summary, a description that says more, and tags the document describes", () => {
    const tags = new Map((doc.tags as Json[]).map((t) => [t.name as string, t.description as string]));
    for (const [name, description] of tags) expect(description?.length ?? 0, `tag ${name}`).toBeGreaterThan(40);
    const used = new Set<string>();
    for (const { where, op } of operations()) {
      expect(typeof op.summary, `${where}: summary`).toBe("string");
      expect(op.summary.length, `${where}: summary`).toBeGreaterThan(5);
      expect(typeof op.description, `${where}: description`).toBe("string");
      // Prose a user learns from: longer than a label, and not the summary again.
      expect(op.description.length, `${where}: description`).toBeGreaterThan(op.summary.length + 30);
      expect(op.description, `${where}: description`).not.toMatch(/\b(TODO|TBD|FIXME)\b/);
      expect(op.tags?.length, `${where}: tags`).toBeGreaterThan(0);
      for (const tag of op.tags as string[]) {
        expect(tags.has(tag), `${where}: tag ${tag} is not among the document's tags`).toBe(true);
        used.add(tag);
      }
    }
    expect([...tags.keys()].filter((t) => !used.has(t)), "tags no operation uses").toEqual([]);
  });

  it("describes every parameter, every schema component and every response", () => {
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, value] of Object.entries(item as Json)) {
        const params = method === "parameters" ? (value as Json[]) : METHODS.includes(method) ? ((value as Json).parameters ?? []) : [];
        for (const p of params as Json[]) expect(p.description?.length ?? 0, `${method} ${path}: parameter ${p.name}`).toBeGreaterThan(10);
        if (!METHODS.includes(method)) continue;
        for (const [status, r] of Object.entries((value as Json).responses as Json)) {
          expect((r as Json).description?.length ?? 0, `${method} ${path}: ${status}`).toBeGreaterThan(3);
        }
      }
    }
    for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
      expect((schema as Json).description?.length ?? 0, `component ${name}`).toBeGreaterThan(10);
    }
  });

  it("documents a client error for every operation that takes a key", () => {
    for (const { where, op } of operations()) {
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      expect(Object.keys(op.responses as Json).some((s) => s.startsWith("4")), where).toBe(true);
    }
  });

  it("has examples that its own schemas accept", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const components = JSON.parse(JSON.stringify({ components: doc.components }).replaceAll('"#/components/', '"doc#/components/')) as Json;
    ajv.addSchema({ $id: "doc", ...components });
    let checked = 0;
    for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
      for (const example of ((schema as Json).examples ?? []) as unknown[]) {
        const ok = ajv.validate({ $ref: `doc#/components/schemas/${name}` }, example);
        expect(ok, `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it("names its servers: the gateway's as relative, the receiving surface's where every webhookUrl points", async () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
    const receiving = doc.paths["/h/{endpointId}"] as Json;
    const { webhookUrl, id } = await t.a.api.endpoints.create({});
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      const op = receiving[method] as Json;
      expect(op.servers, method).toEqual([expect.objectContaining({ url: webhookUrl.slice(0, -`/h/${id}`.length) })]);
      expect(op.security, method).toEqual([]);
      expect(Object.keys(op.responses as Json), method).toEqual(expect.arrayContaining(["200", "404", "413", "503", "default"]));
    }
  });
});
