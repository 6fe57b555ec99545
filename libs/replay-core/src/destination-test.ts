import type { ServiceImpl } from "@connectrpc/connect";
import type { ReplayService } from "@whc/contracts";
import { AppError, notFound, validationFailed } from "@whc/errors";
import { openCapture } from "@whc/sealing";
import { compileFilter, filterView, FilterRefused, type CompiledFilter } from "@whc/routing";
import type { ForwardDeps } from "./forward-attempt.js";
import { captureAsTransformRequest } from "./transform.js";

type TestHandlers = Pick<ServiceImpl<typeof ReplayService>, "testDestination">;

function compiled(filterJson: string): CompiledFilter {
  if (!filterJson) return compileFilter(undefined);
  let filter: unknown;
  try {
    filter = JSON.parse(filterJson);
  } catch {
    throw validationFailed("filter_json", "format");
  }
  try {
    return compileFilter(filter as Record<string, unknown>);
  } catch (err) {
    if (err instanceof FilterRefused) throw validationFailed(err.field ? `filter.${err.field}` : "filter", err.reason as "format", err.message);
    throw err;
  }
}

/**
 * TestDestination (design §17): a destination's filter run on a stored event exactly as ingest
 * runs it (the same view, @whc/routing), and its transform exactly as a delivery runs it (the
 * same sandbox and input, transform.ts). Nothing is sent and nothing is recorded. One catalog
 * call (GetEvent, not marked read), crypto's for a data key not cached.
 */
export function createDestinationTest(deps: Pick<ForwardDeps, "catalog" | "opener" | "transforms" | "now">): TestHandlers {
  const now = deps.now ?? Date.now;
  return {
    async testDestination(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      const filter = compiled(req.filterJson);
      const { event: stored } = await deps.catalog.getEvent({ accountId: req.accountId, endpointId: req.endpointId, eventId: req.eventId, markRead: false });
      if (!stored) throw notFound("event");
      const { event, body, decryption, requestReadable } = await openCapture(deps.opener, stored);
      if (decryption === "failed" || !requestReadable) throw new AppError("conflict", "the event's body or request cannot be read");
      const view = filterView({
        method: event.method,
        rest: event.path,
        headers: event.headers.map((h) => [h.name, h.value] as const),
        body,
        eventType: event.canonicalEventType,
        provider: event.provider,
        verification: event.verification,
      });
      if (!filter.test(view)) return { matched: false, requestJson: "", error: "", durationMs: 0 };
      const given = captureAsTransformRequest(event, body);
      if (!req.transform) return { matched: true, requestJson: JSON.stringify(given), error: "", durationMs: 0 };
      if (!deps.transforms) throw new AppError("service_unavailable", "transforms do not run in this process");
      const outcome = await deps.transforms.run(req.transform, given, { now: now() });
      if (!outcome.ok) return { matched: true, requestJson: "", error: outcome.error, durationMs: outcome.durationMs };
      return { matched: true, requestJson: outcome.request ? JSON.stringify(outcome.request) : "", error: "", durationMs: outcome.durationMs };
    },
  };
}
