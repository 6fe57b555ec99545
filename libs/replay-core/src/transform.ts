import type { Event } from "@whc/contracts";
import { targetUrl } from "@whc/api-model";
import { fromTransformRequest, toTransformRequest, type TransformRequest, type TransformSandbox } from "@whc/transform-sandbox";
import type { OpenedDelivery } from "./forward-attempt.js";

/** What runs a destination's transform (design §17): the sandbox, or a test's stand-in. */
export type TransformRunner = Pick<TransformSandbox, "run">;

/** The request one attempt sends: the capture as stored, or as the destination's transform made it. */
export interface OutgoingRequest {
  method: string;
  /** In order, as captured (or as the transform returned them). */
  headers: { name: string; value: string }[];
  body: Uint8Array | undefined;
  /** Where it goes: the delivery's target, or the destination with the transform's path and query. */
  target: string;
  transformed: boolean;
}

export type Prepared = { kind: "send"; request: OutgoingRequest } | { kind: "skipped" } | { kind: "failed"; message: string };

/** The capture's sub-path and query, split as a transform sees them. */
function splitRest(rest: string): { path: string; query: string } {
  const at = rest.indexOf("?");
  return at < 0 ? { path: rest, query: "" } : { path: rest.slice(0, at), query: rest.slice(at + 1) };
}

/** The stored capture as a transform is given it (and as the destination test shows it untransformed). */
export function captureAsTransformRequest(event: Event, body: Uint8Array | undefined): TransformRequest {
  const { path, query } = splitRest(event.path);
  return toTransformRequest({ method: event.method, path, query, headers: event.headers.map((h) => [h.name, h.value] as const), body: body ?? new Uint8Array() });
}

/**
 * The request an attempt to this delivery sends. Without a transform: the capture as stored,
 * to the delivery's target. With one: what `transform(req)` returned, run in the sandbox with
 * `nowMs` as its only clock; a body it left alone goes as the captured bytes; a path or query it
 * changed makes the target again (keepPath). Null skips the delivery; a throw, a timeout or a
 * bad return fails it, with the sandbox's words for why.
 */
export async function prepareRequest(runner: TransformRunner | undefined, d: OpenedDelivery, nowMs: number): Promise<Prepared> {
  const source = d.destination.transform;
  if (!source) return { kind: "send", request: { method: d.event.method, headers: d.event.headers, body: d.body, target: d.target, transformed: false } };
  if (!runner) return { kind: "failed", message: "transforms do not run in this process" };
  const given = captureAsTransformRequest(d.event, d.body);
  const outcome = await runner.run(source, given, { now: nowMs });
  if (!outcome.ok) return { kind: "failed", message: outcome.error };
  if (outcome.request === null) return { kind: "skipped" };
  const out = fromTransformRequest(outcome.request, d.body ?? new Uint8Array());
  const moved = out.path !== given.path || out.query !== given.query;
  const target = moved ? targetUrl(d.settings, `${out.path}${out.query ? `?${out.query}` : ""}`) : d.target;
  return {
    kind: "send",
    request: { method: out.method, headers: out.headers.map(([name, value]) => ({ name, value })), body: out.body, target, transformed: true },
  };
}
