import {
  BREAKER_DEFAULTS,
  breakerSettingsOf,
  DESTINATION_DEFAULTS as DEFAULTS,
  keptDestination,
  isForwardingMode,
  MAX_DESTINATIONS,
  type DestinationInput,
  type DestinationViewJson,
  type EndpointJson,
  type EventSummaryJson,
} from "@whc/api-model";
import { clear, h } from "./dom.js";
import { plural, relativeTime } from "./format.js";
import { jobsSection } from "./redeliveries.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

function limitText(d: DestinationViewJson): string {
  const r = d.rateLimit;
  if (!r) return "—";
  const rate = r.perSecond !== undefined ? `${r.perSecond}/s` : r.perMinute !== undefined ? `${r.perMinute}/min` : "";
  const at = r.concurrency !== undefined ? `${r.concurrency} at once` : "";
  return [rate, at].filter(Boolean).join(", ");
}

/**
 * Where the destination stands (design §18): sending, paused, its breaker open (deliveries held,
 * the next probe), probing, or draining what was held.
 */
function stateCell(d: DestinationViewJson): HTMLElement {
  const b = d.breaker;
  const held = b.held ? ` · ${b.held.toLocaleString("en")} held` : "";
  const since = b.since ? ` since ${relativeTime(b.since)}` : "";
  const [cls, text, title] = d.paused
    ? ["warn", `paused${held}`, "Deliveries are held until it is resumed; then they drain oldest first"]
    : b.state === "open"
      ? ["failed", `breaker open${held}`, `${plural(b.consecutiveFailures, "failed attempt")} in a row${since}; nothing is sent${b.nextProbeAt ? `, one held delivery is tried ${relativeTime(b.nextProbeAt)}` : ""}`]
      : b.state === "half_open"
        ? ["warn", `probing${held}`, "One held delivery is being tried: success closes the breaker"]
        : b.held
          ? ["warn", `draining${held}`, "The breaker closed: held deliveries go oldest first, paced"]
          : ["verified", "sending", b.consecutiveFailures ? `${plural(b.consecutiveFailures, "failed attempt")} in a row (opens at ${b.failures})` : "Deliveries go as they come"];
  return h("span", { class: `pill ${cls}`, "data-testid": "destination-state", "data-state": d.paused ? "paused" : b.state, "data-held": String(b.held), title }, text);
}

function row(d: DestinationViewJson, edit: () => void, remove: (() => void) | undefined, togglePause: () => void): HTMLElement {
  const editButton = h("button", { type: "button", class: "btn small", "data-testid": "destination-edit", "aria-label": `Edit ${d.name}` }, "Edit");
  editButton.addEventListener("click", edit);
  const removeButton = h("button", { type: "button", class: "btn small danger", "data-testid": "destination-remove", "aria-label": `Remove ${d.name}`, disabled: !remove, title: remove ? undefined : "An endpoint that forwards keeps one destination at least" }, "Remove");
  if (remove) removeButton.addEventListener("click", remove);
  const pauseButton = h("button", { type: "button", class: "btn small", "data-testid": d.paused ? "destination-resume" : "destination-pause", "aria-label": `${d.paused ? "Resume" : "Pause"} ${d.name}` }, d.paused ? "Resume" : "Pause");
  pauseButton.addEventListener("click", () => {
    pauseButton.disabled = true;
    togglePause();
  });
  return h(
    "tr",
    { "data-testid": "destination-row", "data-destination-id": d.id, "data-name": d.name },
    h("td", { class: "mono" }, d.name),
    h("td", { class: "mono ellipsis", title: d.url }, d.url),
    h("td", { class: d.filter ? "mono ellipsis" : "empty", title: d.filter ? JSON.stringify(d.filter) : "every capture" }, d.filter ? JSON.stringify(d.filter) : "every capture"),
    h("td", {}, d.transform ? h("span", { class: "pill" }, "transform") : "—"),
    h("td", {}, limitText(d)),
    h("td", {}, stateCell(d)),
    h("td", { class: "row" }, pauseButton, editButton, removeButton),
  );
}

/** Parses a JSON textarea: undefined when empty, else the object or the reason it is not one. */
function jsonObject(text: string): { ok: true; value: Record<string, unknown> | undefined } | { ok: false; problem: string } {
  if (!text.trim()) return { ok: true, value: undefined };
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "the filter must be a JSON object" };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (err) {
    return { ok: false, problem: `the filter is not JSON (${(err as Error).message})` };
  }
}

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

const numberInput = (value: number | undefined, min: number, max: number, testid: string, placeholder = "") =>
  h("input", { type: "number", min: String(min), max: String(max), step: "1", value: value === undefined ? "" : String(value), placeholder, "data-testid": testid });

const optionalNumber = (input: HTMLInputElement): number | undefined => (input.value.trim() === "" ? undefined : Number(input.value));

interface EditorOptions {
  readonly ctx: AppContext;
  readonly ep: EndpointJson;
  /** The destination edited; undefined for a new one. */
  readonly destination: DestinationViewJson | undefined;
  save(input: DestinationInput): Promise<boolean>;
  cancel(): void;
}

/**
 * One destination's form: where it goes, which captures (the filter), what is sent (the
 * transform), how fast, and a try of the filter and transform on a stored event
 * (`POST .../destinations/test`) before anything is saved.
 */
function editor(o: EditorOptions): HTMLElement {
  const d = o.destination;
  const proxy = o.ep.operatingMode === "proxy";
  const name = h("input", { required: true, maxlength: "64", pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}", value: d?.name ?? "", placeholder: "billing", "data-testid": "destination-name" });
  const url = h("input", { type: "url", required: true, maxlength: "2048", value: d?.url ?? "", placeholder: "https://app.example.com/hooks", "data-testid": "destination-url" });
  const keepPath = h("input", { type: "checkbox", checked: d?.keepPath ?? DEFAULTS.keepPath, "data-testid": "destination-keep-path" });
  const timeoutMs = numberInput(d?.timeoutMs ?? DEFAULTS.timeoutMs, 100, 60_000, "destination-timeout");
  const maxAttempts = numberInput(d?.maxAttempts ?? DEFAULTS.maxAttempts, 1, 20, "destination-max-attempts");
  const filter = h("textarea", { class: "json mono", rows: "4", spellcheck: "false", placeholder: '{"eventType": {"$in": ["invoice.paid"]}}', "data-testid": "destination-filter", disabled: proxy }, d?.filter ? JSON.stringify(d.filter, null, 2) : "");
  const transform = h(
    "textarea",
    { class: "json mono", rows: "6", spellcheck: "false", placeholder: "function transform(req) {\n  req.headers['x-env'] = ['prod'];\n  return req;\n}", "data-testid": "destination-transform" },
    d?.transform ?? "",
  );
  const perSecond = numberInput(d?.rateLimit?.perSecond, 1, 10_000, "destination-per-second", "no limit");
  const concurrency = numberInput(d?.rateLimit?.concurrency, 1, 100, "destination-concurrency", "no limit");
  const configured = breakerSettingsOf(d?.breaker);
  const failures = numberInput(configured?.failures, 1, 100, "destination-breaker-failures", String(BREAKER_DEFAULTS.failures));
  const probeAfterMs = numberInput(configured?.probeAfterMs, 1000, 600_000, "destination-breaker-probe", String(BREAKER_DEFAULTS.probeAfterMs));
  const paused = h("input", { type: "checkbox", checked: d?.paused ?? false, "data-testid": "destination-paused-input" });
  const secret = h("input", { type: "password", autocomplete: "new-password", maxlength: "1024", placeholder: d?.targetSecretSet ? "set (type to replace)" : "target secret (re-sign)", "data-testid": "destination-secret" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true, "data-testid": "destination-problem" });

  const tryOn = h("select", { "data-testid": "destination-test-event", "aria-label": "Event to try on" }, h("option", { value: "" }, "Loading events…"));
  const tryButton = h("button", { type: "button", class: "btn", "data-testid": "destination-test" }, "Try on this event");
  const tried = h("div", { "aria-live": "polite", "data-testid": "destination-test-result" });
  void o.ctx.client.events
    .list(o.ep.id, { limit: "20" })
    .then((page) => {
      const items: EventSummaryJson[] = page.items;
      clear(tryOn, ...(items.length ? items.map((e) => h("option", { value: e.id }, `${e.canonicalEventType ?? e.method} · ${relativeTime(e.receivedAt)} · ${e.id.slice(0, 8)}`)) : [h("option", { value: "" }, "No event captured yet")]));
      tryButton.disabled = items.length === 0;
    })
    .catch(() => clear(tryOn, h("option", { value: "" }, "The events could not be read")));

  tryButton.addEventListener("click", async () => {
    const parsed = jsonObject(filter.value);
    problem.hidden = parsed.ok;
    if (!parsed.ok) return void (problem.textContent = parsed.problem);
    if (!tryOn.value) return;
    tryButton.disabled = true;
    const result = await o.ctx.banner.guarded(() =>
      o.ctx.client.endpoints.testDestination(o.ep.id, {
        eventId: tryOn.value,
        destination: { filter: parsed.value ?? null, transform: transform.value.trim() ? transform.value : null },
      }),
    );
    tryButton.disabled = false;
    if (!result) return clear(tried);
    const verdict = !result.matched ? "not matched: this capture would not be delivered" : result.error ? "the transform failed: the delivery would be failed" : result.request === null ? "matched, skipped by the transform (null)" : "matched: this request would be sent";
    clear(
      tried,
      h(
        "div",
        { class: "card" },
        h("p", { "data-testid": "destination-test-verdict", "data-matched": String(result.matched) }, h("strong", {}, verdict), result.durationMs ? h("span", { class: "hint" }, ` (transform ran ${result.durationMs.toFixed(1)} ms)`) : null),
        result.error ? h("p", { class: "problem", "data-testid": "destination-test-error" }, result.error) : null,
        result.request ? h("pre", { class: "code", tabindex: "0", "aria-label": "The request that would be sent", "data-testid": "destination-test-request" }, JSON.stringify(result.request, null, 2)) : null,
      ),
    );
  });

  const cancel = h("button", { type: "button", class: "btn ghost", "data-testid": "destination-cancel" }, "Cancel");
  cancel.addEventListener("click", () => o.cancel());
  const form = h(
    "form",
    { class: "edit form card", "data-testid": "destination-form", "aria-label": d ? `Destination ${d.name}` : "New destination" },
    h("h3", {}, d ? `Destination ${d.name}` : "New destination"),
    field("Name", name, "Unique within the endpoint; whc apply matches destinations by it."),
    field("URL", url),
    h("label", { class: "check" }, keepPath, h("span", {}, "Append the capture's sub-path and query")),
    field("Timeout per attempt (ms)", timeoutMs),
    field("Attempts before giving up", maxAttempts),
    field("Target secret", secret, d?.targetSecretSet ? "A secret is set: signatures are recomputed with it." : "None: the captured signatures are sent as they came."),
    field("Filter", filter, proxy ? "A proxy endpoint forwards every capture: no filter." : "A MongoDB-style query over {method, path, query, headers, body, eventType, provider, verification}. Empty: every capture."),
    field("Transform", transform, "JavaScript defining transform(req); return the request to send, or null to skip. Runs sandboxed: 50 ms CPU, 16 MiB, no I/O."),
    h("div", { class: "row" }, tryOn, tryButton),
    tried,
    h("fieldset", { class: "section" }, h("legend", {}, "Delivery control"), field("At most per second", perSecond), field("At most at once", concurrency), field("Breaker: failures before it opens", failures), field("Breaker: first probe after (ms)", probeAfterMs), h("label", { class: "check" }, paused, h("span", {}, "Paused: hold its deliveries until resumed"))),
    problem,
    h("div", { class: "row form-actions" }, h("button", { type: "submit", class: "btn primary", "data-testid": "destination-save" }, d ? "Save destination" : "Add destination"), cancel),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const parsed = jsonObject(filter.value);
    problem.hidden = parsed.ok;
    if (!parsed.ok) return void (problem.textContent = parsed.problem);
    const rate = { perSecond: optionalNumber(perSecond), concurrency: optionalNumber(concurrency) };
    const breaker = { failures: optionalNumber(failures), probeAfterMs: optionalNumber(probeAfterMs) };
    const input: DestinationInput = {
      ...(d ? { id: d.id } : {}),
      name: name.value.trim(),
      url: url.value.trim(),
      keepPath: keepPath.checked,
      timeoutMs: Number(timeoutMs.value),
      maxAttempts: Number(maxAttempts.value),
      filter: proxy ? null : (parsed.value ?? null),
      transform: transform.value.trim() ? transform.value : null,
      rateLimit: rate.perSecond !== undefined || rate.concurrency !== undefined ? JSON.parse(JSON.stringify(rate)) : null,
      breaker: breaker.failures !== undefined || breaker.probeAfterMs !== undefined ? { failures: breaker.failures ?? BREAKER_DEFAULTS.failures, probeAfterMs: breaker.probeAfterMs ?? BREAKER_DEFAULTS.probeAfterMs } : null,
      paused: paused.checked,
      ...(secret.value ? { targetSecret: secret.value } : {}),
    };
    if (await o.save(input)) return;
  });
  return form;
}

/**
 * Where a relay endpoint's captures go (design §17): its destinations, each with its filter,
 * transform and delivery control, edited one at a time; each save PATCHes the whole list, the
 * others sent back by id so their secrets stay.
 */
function mountDestinations(ctx: AppContext, endpoint: EndpointJson): Mounted {
  let ep = endpoint;
  const list = h("div");
  const form = h("div");
  const jobs = ep.operatingMode === "relay" ? jobsSection(ctx, ep) : undefined;
  const element = h("div", { class: "destinations-view", "data-testid": "destinations-view" }, list, form, jobs?.element ?? null);

  async function saveAll(destinations: DestinationInput[]): Promise<boolean> {
    const updated = await ctx.banner.guarded(() => ctx.client.endpoints.update(ep.id, { destinations }));
    if (!updated) return false;
    ctx.endpoints.put(updated);
    ctx.emit("endpoint-updated", updated);
    return true;
  }

  function open(d: DestinationViewJson | undefined): void {
    clear(
      form,
      editor({
        ctx,
        ep,
        destination: d,
        cancel: () => clear(form),
        save: async (input) => {
          const others = (ep.destinations ?? []).map((x) => (d && x.id === d.id ? input : keptDestination(x)));
          const ok = await saveAll(d ? others : [...others, input]);
          if (ok) clear(form);
          return ok;
        },
      }),
    );
    form.querySelector("input")?.focus();
  }

  function render(): void {
    if (!isForwardingMode(ep.operatingMode)) {
      return clear(
        list,
        h("div", { class: "card", "data-testid": "no-destinations" }, h("h3", {}, "This endpoint does not forward"), h("p", {}, "Destinations are for relay and proxy endpoints: choose the operating mode in Settings.")),
      );
    }
    const destinations = ep.destinations ?? [];
    const add = h("button", { type: "button", class: "btn primary", "data-testid": "destination-add", disabled: ep.operatingMode === "proxy" || destinations.length >= MAX_DESTINATIONS }, "Add destination");
    add.addEventListener("click", () => open(undefined));
    clear(
      list,
      h("div", { class: "row" }, h("p", { class: "hint" }, `Each capture gets one delivery per destination whose filter it matches (at most ${MAX_DESTINATIONS}).`), h("span", { class: "spacer" }), add),
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "destinations" },
          h("thead", {}, h("tr", {}, ...["Name", "URL", "Filter", "Transform", "Limit", "State", ""].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            ...destinations.map((d) =>
              row(
                d,
                () => open(d),
                destinations.length > 1
                  ? () => {
                      if (!confirm(`Remove the destination ${d.name}? Its pending deliveries are not sent.`)) return;
                      void saveAll(destinations.filter((x) => x.id !== d.id).map(keptDestination));
                    }
                  : undefined,
                () => void saveAll(destinations.map((x) => (x.id === d.id ? { ...keptDestination(x), paused: !x.paused } : keptDestination(x)))),
              ),
            ),
          ),
        ),
      ),
    );
  }

  render();
  // The breakers move on their own (failures, probes, the drain): read again while shown.
  const refresh = setInterval(() => {
    if (form.childElementCount > 0) return;
    void ctx.client.endpoints.get(ep.id).then(
      (updated) => {
        ctx.endpoints.put(updated);
        ctx.emit("endpoint-updated", updated);
      },
      () => undefined,
    );
  }, 5000);
  const off = ctx.on("endpoint-updated", (updated) => {
    if (updated.id !== ep.id) return;
    ep = updated;
    render();
  });
  return {
    element,
    dispose() {
      off();
      clearInterval(refresh);
      jobs?.dispose();
    },
  };
}

export const destinationsTab: EndpointTab = { segment: "destinations", label: "Destinations", mount: mountDestinations };
