import { forwardViewOf } from "@whc/api-model/present";

/** An endpoint's forward settings as stored (forward_json: the /v1 object without its secret). */
export interface ForwardTarget {
  url: string;
  keepPath: boolean;
  timeoutMs: number;
  maxAttempts: number;
}

/** The stored settings, read as the Endpoint presents them; undefined for none (or a bad one). */
export function forwardTargetOf(json: string): ForwardTarget | undefined {
  const view = forwardViewOf(json, false);
  return view && { url: view.url, keepPath: view.keepPath, timeoutMs: view.timeoutMs, maxAttempts: view.maxAttempts };
}

/**
 * Where one event goes: the destination, with the capture's sub-path and query when keepPath
 * (`rest` is what followed the endpoint's webhook URL: "", "/ci", "/ci?x=1" or "?x=1"). The
 * sub-path continues the destination's path (one slash between them); a query is added to
 * the destination's own with `&`. Both are kept byte for byte, never re-encoded.
 */
export function forwardUrl(target: Pick<ForwardTarget, "url" | "keepPath">, rest: string): string {
  const base = target.url.split("#", 1)[0] as string;
  if (!target.keepPath || !rest) return base;
  const [restPath, restQuery] = splitQuery(rest.split("#", 1)[0] as string);
  const [basePath, baseQuery] = splitQuery(base);
  const path = restPath ? basePath.replace(/\/+$/, "") + (restPath.startsWith("/") ? restPath : `/${restPath}`) : basePath;
  const query = [baseQuery, restQuery].filter((q) => q).join("&");
  return query ? `${path}?${query}` : path;
}

function splitQuery(text: string): [path: string, query: string] {
  const at = text.indexOf("?");
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}
