import type Router from "@koa/router";
import type { Context } from "koa";
import type { z } from "zod";
import { uuid, type Scope } from "@whc/api-model";
import type { AuthState } from "./middleware/auth.js";
import { readJsonObject } from "./middleware/json-body.js";
import type { Tag } from "./openapi-tags.js";
import { parseOrThrow } from "./validation.js";
import { endpointParam, requireScope, requireVisibleEndpoint } from "./scopes.js";

type Json = Record<string, unknown>;
type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<Q, B> {
  /** Path parameters: UUIDs validated and lower-cased, the others (Route.params) validated. */
  params: Record<string, string>;
  query: Parsed<Q>;
  body: Parsed<B>;
  /** Absent only on `open` routes. */
  auth: AuthState;
}

/**
 * One operation: what the router mounts and what the OpenAPI document describes, declared
 * once. The handler returns the answer's body (or nothing, for 204).
 */
export interface Route<Q extends z.ZodType | undefined = z.ZodType | undefined, B extends z.ZodType | undefined = z.ZodType | undefined> {
  method: Method;
  /** OpenAPI style: `/v1/endpoints/{id}`; every `{param}` is a UUID unless `params` says otherwise. */
  path: string;
  /** Path parameters that are not UUIDs: each one's schema and what it is (for the document). */
  params?: Record<string, { schema: z.ZodType<string>; description: string }>;
  operationId: string;
  /** One line naming what the operation does: tools list operations by it. */
  summary: string;
  /**
   * What a user learns from (Markdown): what the operation does, what it needs, its notable
   * errors. The document adds the error codes and the statuses; say when and why.
   */
  description: string;
  /** Where tools group it; the first is its home. */
  tags: readonly [Tag, ...Tag[]];
  /** Answered without credentials. */
  open?: boolean;
  /**
   * The scope a key needs (design §15), checked once the request is valid and its endpoint
   * visible to the key; `any`: every key may. Every route that takes a key names one (the
   * scope matrix test holds them to it).
   */
  scope?: Scope | "any";
  /** Beyond interface 0.1.0. */
  extension?: boolean;
  query?: Q;
  /** A JSON object body (application/json, at most `maxBodyBytes`); absent reads as {}. */
  body?: B;
  /** The largest body taken (default 64 KiB, design §3; 1 MiB where destinations travel: MAX_ENDPOINT_BODY_BYTES). */
  maxBodyBytes?: number;
  bodyRequired?: boolean;
  /** Request headers the operation reads, as OpenAPI parameter objects. */
  headers?: Json[];
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string; headers?: Json };
  /** Error statuses it can answer, besides the ones every route can. */
  errors: number[];
  /** Other non-error answers, as OpenAPI response objects by status. */
  otherResponses?: Record<string, Json>;
  handler(ctx: Context, input: RouteInput<Q, B>): Promise<unknown> | unknown;
}

/** Keeps each route's query and body types tied to its handler's input. */
export function route<Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  r: Route<Q, B>,
): Route {
  return r as unknown as Route;
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]!);
}

export function koaPath(path: string): string {
  return path.replace(/\{([A-Za-z]+)\}/g, ":$1");
}

/**
 * Mounts every route, validating path ids, then the query, then the body, as documented; then
 * an endpoint a restricted key does not see is 404 (as an unknown one, which the catalog
 * answers after the same validation), then a key without the route's scope is 403.
 */
export function mountRoutes(router: Router, routes: readonly Route[]): void {
  for (const r of routes) {
    const names = pathParams(r.path);
    const endpointName = endpointParam(r.path);
    if (!r.open && r.scope === undefined) throw new Error(`${r.method} ${r.path} names no scope`);
    const method = r.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete";
    router[method](koaPath(r.path), async function routeHandler(ctx) {
      const params: Record<string, string> = {};
      for (const name of names) {
        const other = r.params?.[name];
        params[name] = other ? parseOrThrow(other.schema, ctx.params[name], name) : parseOrThrow(uuid, ctx.params[name], name).toLowerCase();
      }
      const query = r.query ? parseOrThrow(r.query, ctx.query) : undefined;
      const body = r.body ? parseOrThrow(r.body, await readJsonObject(ctx, r.maxBodyBytes)) : undefined;
      const auth = ctx.state.auth as AuthState;
      if (!r.open) {
        if (endpointName) requireVisibleEndpoint(auth, params[endpointName]!);
        if (r.scope !== "any") requireScope(auth, r.scope!);
      }
      ctx.status = r.success.status;
      const out = await r.handler(ctx, { params, query, body, auth });
      if (out !== undefined) ctx.body = out;
    });
  }
}
