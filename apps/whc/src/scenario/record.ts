import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { SCENARIO_LIMITS, type ApiClient, type EndpointJson, type EventDetailJson, type ExportEventsQueryText, type Scenario, type ScenarioEvent } from "@whc/api-model";
import { PROVIDER_NAMES } from "@whc/signatures";
import { CliError } from "../exit-codes.js";
import { bodyBytes, isSentOn } from "../listen/local-request.js";

/** One captured event as a scenario's request; `firstAtMs` is when the first one was received. */
export function scenarioEvent(detail: EventDetailJson, firstAtMs: number): ScenarioEvent {
  const body = bodyBytes(detail);
  if (!body) {
    const why = detail.decryption === "failed" ? "its body cannot be decrypted" : "it has no stored body (captured as metadata only)";
    throw new CliError(`event ${detail.id} cannot be recorded: ${why}; leave it out with the filters (--from, --after...)`);
  }
  const cut = detail.path.indexOf("?");
  const headers: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(detail.headers)) if (isSentOn(name)) headers[name] = values;
  return {
    offsetMs: Math.max(0, Date.parse(detail.receivedAt) - firstAtMs),
    method: detail.method,
    path: cut < 0 ? detail.path : detail.path.slice(0, cut),
    query: cut < 0 ? "" : detail.path.slice(cut + 1),
    headers,
    bodyBase64: Buffer.from(body).toString("base64"),
  };
}

/** The provider whose scheme a replay signs with: the endpoint's, else the one detected on its first event. */
function scenarioProvider(endpoint: EndpointJson, first: EventDetailJson | undefined): string {
  const known = (p: string | undefined) => p !== undefined && (PROVIDER_NAMES as readonly string[]).includes(p);
  if (known(endpoint.provider) && endpoint.provider !== "generic") return endpoint.provider;
  return known(first?.provider) ? first!.provider : endpoint.provider;
}

/**
 * The endpoint's events matching the filters, oldest first, as a scenario: read from the
 * export (full details, bodies as stored), at most SCENARIO_LIMITS.events of them.
 */
export async function recordScenario(
  client: ApiClient,
  endpoint: EndpointJson,
  query: ExportEventsQueryText,
  warn: (message: string) => void,
): Promise<Scenario> {
  const stream = await client.events.export(endpoint.id, query);
  const lines = createInterface({ input: Readable.fromWeb(stream as WebReadableStream<Uint8Array>), crlfDelay: Infinity });
  const events: ScenarioEvent[] = [];
  let first: EventDetailJson | undefined;
  for await (const line of lines) {
    if (!line) continue;
    const detail = JSON.parse(line) as EventDetailJson;
    first ??= detail;
    if (events.length === SCENARIO_LIMITS.events) {
      lines.close();
      throw new CliError(`more than ${SCENARIO_LIMITS.events} events match: narrow them with the filters (--from, --to, --type...)`);
    }
    if (detail.truncated) warn(`event ${detail.id}: only the first ${bodyBytes(detail)?.length ?? 0} bytes of its body were stored; the scenario has those`);
    events.push(scenarioEvent(detail, Date.parse(first.receivedAt)));
  }
  return { version: 1, provider: scenarioProvider(endpoint, first), events };
}
