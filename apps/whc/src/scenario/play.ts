import { setTimeout as sleep } from "node:timers/promises";
import type { Scenario, ScenarioEvent } from "@whc/api-model";
import { signatureHeaderNames, signHeaders, type Provider } from "@whc/signatures";
import { localTarget, wireValue, type LocalRequest } from "../listen/local-request.js";
import { withSignature } from "../listen/resign.js";
import { sendLocal, type SendOutcome } from "../listen/send.js";

export interface PlayOptions {
  /** Where each request goes: its recorded sub-path and query are appended. */
  target: URL;
  /** The recorded gaps are divided by this; Infinity (`--speed max`) sends each as soon as the one before is answered. */
  speed: number;
  /** Sign each request afresh with this provider's scheme and secret, as it is sent. */
  resign?: { provider: Provider; secret: Uint8Array };
  timeoutMs: number;
}

export interface PlayedEvent {
  /** 1-based, in the file's order. */
  index: number;
  status?: number;
  error?: string;
  durationMs: number;
  resigned: boolean;
  ok: boolean;
}

/** The request for one recorded event, to the target. */
export function scenarioRequest(event: ScenarioEvent, target: URL): LocalRequest {
  const headers: [string, string][] = [];
  for (const [name, values] of Object.entries(event.headers)) for (const value of values) headers.push([name, wireValue(value)]);
  const recorded = event.query ? `${event.path}?${event.query}` : event.path;
  return {
    origin: new URL(target.origin),
    path: localTarget(target, recorded),
    method: event.method,
    headers,
    body: Buffer.from(event.bodyBase64, "base64"),
  };
}

/** The request with its provider's signature headers made now, over its own bytes and URL. */
export function resigned(req: LocalRequest, resign: NonNullable<PlayOptions["resign"]>, nowMs: number): LocalRequest {
  const url = new URL(req.path, req.origin).href;
  const fresh = signHeaders({ provider: resign.provider, secret: resign.secret, body: req.body, nowMs, headers: req.headers, url });
  return withSignature(req, {
    headers: Object.fromEntries(fresh),
    replaces: signatureHeaderNames(resign.provider),
    provider: resign.provider,
    signedAt: new Date(nowMs).toISOString(),
  });
}

function played(index: number, outcome: SendOutcome, resignedNow: boolean): PlayedEvent {
  if ("error" in outcome) return { index, error: outcome.error, durationMs: outcome.durationMs, resigned: resignedNow, ok: false };
  return { index, status: outcome.status, durationMs: outcome.durationMs, resigned: resignedNow, ok: outcome.status >= 200 && outcome.status <= 299 };
}

/**
 * Sends every event in the file's order, one at a time: event i goes when offsetMs / speed has
 * passed since the start (or as soon as event i-1 is answered, when that is later). Every
 * outcome is reported as it comes; the run never stops early, so CI sees every failure.
 */
export async function playScenario(s: Scenario, o: PlayOptions, report: (e: PlayedEvent) => void): Promise<PlayedEvent[]> {
  const startedAt = Date.now();
  const results: PlayedEvent[] = [];
  for (const [i, event] of s.events.entries()) {
    if (Number.isFinite(o.speed)) {
      const wait = startedAt + event.offsetMs / o.speed - Date.now();
      if (wait > 0) await sleep(wait);
    }
    let req = scenarioRequest(event, o.target);
    if (o.resign) req = resigned(req, o.resign, Date.now());
    const result = played(i + 1, await sendLocal(req, o.timeoutMs), Boolean(o.resign));
    results.push(result);
    report(result);
  }
  return results;
}
