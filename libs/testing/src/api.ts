/** A small client of the /v1 API for tests: real HTTP, JSON in and out. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

import type { OpenApiValidator } from "./openapi-validator.js";

/** With a validator, every response is checked against the served OpenAPI document. */
export function apiClient(baseUrl: string, apiKey?: string, validator?: OpenApiValidator) {
  async function call<T = any>(
    method: string,
    path: string,
    options: { json?: unknown; body?: string; headers?: Record<string, string>; key?: string | null } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? apiKey : options.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    validator?.(method, `${baseUrl}${path}`, res.status, res.headers, parsed);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    call,
    get: <T = any>(path: string, o?: Parameters<typeof call>[2]) => call<T>("GET", path, o),
    post: <T = any>(path: string, json?: unknown, o?: Parameters<typeof call>[2]) => call<T>("POST", path, { ...o, json }),
    delete: <T = any>(path: string, o?: Parameters<typeof call>[2]) => call<T>("DELETE", path, o),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;
