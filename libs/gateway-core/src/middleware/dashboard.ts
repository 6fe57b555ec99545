import type { Middleware } from "koa";
import serve from "koa-static";

/**
 * The dashboard page and its assets, for GET/HEAD outside /v1. The page only talks to /v1 on
 * the same origin; the policy keeps it from loading or sending anything anywhere else.
 */
/** The page's own paths: the index and the hashed files Vite writes. Nothing else is looked up. */
const PAGE_PATH = /^\/(index\.html)?$|^\/assets\/[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function dashboard(dir: string): Middleware {
  const files = serve(dir, { index: "index.html", gzip: false, brotli: false, hidden: false, maxage: 0 });
  return async function dashboardMiddleware(ctx, next) {
    if ((ctx.method !== "GET" && ctx.method !== "HEAD") || !PAGE_PATH.test(ctx.path)) return next();
    // koa-static calls its `next` when it has no such file; the rest of the chain runs once,
    // outside it, so nothing downstream is ever caught or run twice here.
    let served = true;
    try {
      await files(ctx, async () => {
        served = false;
      });
    } catch {
      served = false;
    }
    if (!served) return next();
    if (ctx.body !== undefined && ctx.status === 200) {
      ctx.set(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      ctx.set("X-Content-Type-Options", "nosniff");
      ctx.set("Referrer-Policy", "no-referrer");
      if (ctx.path.startsWith("/assets/")) ctx.set("Cache-Control", "public, max-age=31536000, immutable");
      else ctx.set("Cache-Control", "no-cache");
    }
  };
}
