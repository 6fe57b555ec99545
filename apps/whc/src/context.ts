import type { Command } from "commander";
import { ApiError, createApiClient, type ApiClient } from "@whc/api-model";
import { createOutput, type Output } from "./output.js";

/** What every command needs: where its results go and, for /v1 commands, the client. */
export interface Context {
  out: Output;
  /** The gateway's base URL, as given (no trailing slash). */
  apiUrl: string;
  /** The environment the CLI was started with (XDG_STATE_HOME, HOME...). */
  env: NodeJS.ProcessEnv;
  /** The /v1 client; throws `no_api_key` when no key was given. */
  api(): ApiClient;
}

interface GlobalOptions {
  json?: boolean;
  apiUrl: string;
  apiKey?: string;
}

/** Read when a command runs, after commander has parsed the global options. */
export function contextOf(program: Command, env: NodeJS.ProcessEnv): () => Context {
  return () => {
    const o = program.opts<GlobalOptions>();
    const apiKey = o.apiKey ?? env.WHC_API_KEY;
    return {
      out: createOutput(Boolean(o.json)),
      apiUrl: o.apiUrl.replace(/\/+$/, ""),
      env,
      api() {
        if (!apiKey) throw new ApiError(0, "no_api_key", "Set WHC_API_KEY or pass --api-key.", "");
        return createApiClient({ baseUrl: o.apiUrl, apiKey });
      },
    };
  };
}
