import type { Middleware } from "koa";
import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { API_KEY_PATTERN, hashApiKey } from "@whc/identity";

const BEARER = /^Bearer ([A-Za-z0-9_]+)$/;

/** The key a request was made with, as the catalog knows it (design §15). */
export interface AuthState {
  accountId: string;
  keyId: string;
  /** The key's first characters (for the audit log); never the key. */
  keyPrefix: string;
  scopes: string[];
  /** The only endpoints the key sees; empty: every endpoint of the account. */
  endpointIds: string[];
}

/**
 * Bearer API keys: only the SHA-256 of the key ever leaves this process. An unknown, revoked
 * or expired key is 401, alike.
 */
export function authenticate(catalog: Client<typeof CatalogService>): Middleware {
  return async function authMiddleware(ctx, next) {
    const match = BEARER.exec(ctx.get("authorization"));
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) throw new AppError("unauthorized", "missing or malformed key");
    const res = await catalog.authenticateApiKey({ keyHash: hashApiKey(key) });
    ctx.state.auth = {
      accountId: res.accountId,
      keyId: res.keyId,
      keyPrefix: res.prefix,
      scopes: res.scopes,
      endpointIds: res.endpointIds,
    } satisfies AuthState;
    await next();
  };
}
