import { forwardUrl } from "@whc/api-model";
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

export { forwardUrl };
