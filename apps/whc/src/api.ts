/** The CLI's client of the public /v1 API; errors carry the reply's code, message and request id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string,
  ) {
    super(message);
  }
}

export interface Api {
  call<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T>;
}

export function createApi(baseUrl: string, apiKey: string | undefined): Api {
  return {
    async call(method, path, body, signal) {
      if (!apiKey) throw new ApiError(0, "no_api_key", "Set WHC_API_KEY or pass --api-key.", "");
      let res: Response;
      try {
        res = await fetch(`${baseUrl.replace(/\/+$/, "")}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${apiKey}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        });
      } catch (err) {
        if ((err as Error).name === "AbortError") throw err;
        throw new ApiError(0, "unreachable", `Cannot reach ${baseUrl}: ${(err as Error).message}`, "");
      }
      const text = await res.text();
      const json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      if (!res.ok) {
        throw new ApiError(
          res.status,
          String(json?.error ?? res.status),
          String(json?.message ?? res.statusText),
          String(json?.requestId ?? res.headers.get("x-request-id") ?? ""),
        );
      }
      return json as never;
    },
  };
}
