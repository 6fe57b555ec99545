import { type EndpointJson, type RedeliveryFilterJson, type RedeliveryJobJson } from "@whc/api-model";
import { clear, h } from "./dom.js";
import type { Filters } from "./event-filters.js";
import { exactTime, plural, relativeTime } from "./format.js";
import type { AppContext } from "./views.js";

/**
 * The event list's filters as a bulk redelivery's (design §18): the same names, except the
 * body search and the duplicates filter, which a job does not take (undefined then, with why).
 */
export function redeliveryFilterOf(f: Filters): { filter: RedeliveryFilterJson } | { refused: string } {
  if (f.search.trim()) return { refused: "A bulk redelivery cannot filter on a body search: clear the search first." };
  if (f.duplicate) return { refused: "A bulk redelivery does not take the duplicates filter (duplicates are never sent): clear it first." };
  return {
    filter: {
      ...(f.status ? { status: f.status } : {}),
      ...(f.eventType.trim() ? { eventType: f.eventType.trim() } : {}),
      ...(f.forwardState ? { forwardState: f.forwardState } : {}),
      ...(f.drift ? { schemaDrift: f.drift === "true" } : {}),
    },
  };
}

function describe(filter: RedeliveryFilterJson): string {
  const parts = Object.entries(filter).map(([k, v]) => `${k} ${String(v)}`);
  return parts.length ? parts.join(", ") : "every event";
}

/** A job's progress in words and a bar: queued, done and failed of its total. */
function progress(job: RedeliveryJobJson): HTMLElement {
  const ended = job.done + job.failed;
  return h(
    "div",
    { class: "job-progress", "data-testid": "job-progress", "data-state": job.state, "data-done": String(job.done), "data-failed": String(job.failed), "data-total": String(job.total) },
    h("progress", { max: String(Math.max(job.total, 1)), value: String(ended), "aria-label": `${ended} of ${job.total} ended` }),
    h(
      "span",
      {},
      h("span", { class: `pill ${job.state === "done" ? "verified" : job.state === "running" ? "warn" : "failed"}` }, job.state),
      ` ${job.done} delivered, ${job.failed} failed of ${job.total}`,
      job.state === "running" ? ` (${job.queued} put back so far)` : "",
    ),
  );
}

/**
 * "Redeliver…" for the events a list shows: the dry run's count first, then the job, followed
 * until it ends. Only relay endpoints have deliveries to redo.
 */
export function redeliverDialog(ctx: AppContext, ep: EndpointJson, filters: () => Filters): { button: HTMLElement | null; dialog: HTMLDialogElement } {
  const title = h("h3", { id: `redeliver-title-${ep.id}` }, "Redeliver these events");
  const body = h("div", { "aria-live": "polite" });
  const close = h("button", { type: "button", class: "btn ghost", "data-testid": "close-redeliver" }, "Close");
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": `redeliver-title-${ep.id}`, "data-testid": "redeliver-dialog" }, h("div", { class: "form" }, title, body, h("div", { class: "row form-actions" }, close)));
  let control = new AbortController();
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => control.abort());

  async function follow(job: RedeliveryJobJson): Promise<void> {
    const signal = control.signal;
    const shown = h("div");
    clear(body, h("p", { "data-testid": "redeliver-started" }, `Job started by ${job.createdBy.keyPrefix}…: ${describe(job.filter)}.`), shown);
    for (let current = job; ; ) {
      clear(shown, progress(current));
      if (current.state !== "running" || signal.aborted) return;
      await new Promise((r) => setTimeout(r, 1000));
      if (signal.aborted) return;
      const next = await ctx.client.redeliveries.get(ep.id, job.id, signal).catch(() => undefined);
      if (next) current = next;
    }
  }

  async function open(): Promise<void> {
    control.abort();
    control = new AbortController();
    const chosen = redeliveryFilterOf(filters());
    dialog.showModal();
    if ("refused" in chosen) return clear(body, h("p", { class: "problem", "data-testid": "redeliver-refused" }, chosen.refused));
    clear(body, h("p", { class: "hint" }, "Counting…"));
    const counted = await ctx.banner.guarded(() => ctx.client.redeliveries.count(ep.id, chosen.filter));
    if (!counted) return clear(body, h("p", { class: "problem" }, "The deliveries could not be counted."));
    if (counted.count === 0) return clear(body, h("p", { "data-testid": "redeliver-count", "data-count": "0" }, "No delivery of these events can be redone: none ended (pending and held ones are still waiting)."));
    const start = h("button", { type: "button", class: "btn primary", "data-testid": "redeliver-start" }, `Redeliver ${plural(counted.count, "delivery", "deliveries")}`);
    start.addEventListener("click", async () => {
      start.disabled = true;
      const job = await ctx.banner.guarded(() => ctx.client.redeliveries.start(ep.id, chosen.filter));
      if (job) void follow(job);
      else start.disabled = false;
    });
    clear(
      body,
      h(
        "p",
        { "data-testid": "redeliver-count", "data-count": String(counted.count) },
        `${plural(counted.count, "delivery", "deliveries")} of the events matching ${describe(chosen.filter)} ended and can be sent again, through each destination's rate limit and breaker.`,
      ),
      h("div", { class: "row" }, start),
    );
  }

  const button =
    ep.operatingMode === "relay"
      ? h("button", { type: "button", class: "btn small", "data-testid": "open-redeliver", title: "Send the deliveries of the events these filters match again, as a background job" }, "Redeliver…")
      : null;
  button?.addEventListener("click", () => void open());
  return { button, dialog };
}

/** The endpoint's bulk redelivery jobs, newest first, each with its progress; a running one can be canceled. */
export function jobsSection(ctx: AppContext, ep: EndpointJson): { element: HTMLElement; dispose(): void } {
  const list = h("div", { "aria-live": "polite" });
  const element = h("section", { class: "jobs", "aria-labelledby": `jobs-title-${ep.id}` }, h("h3", { id: `jobs-title-${ep.id}` }, "Bulk redeliveries"), list);
  const control = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function load(): Promise<void> {
    const page = await ctx.client.redeliveries.list(ep.id, control.signal).catch(() => undefined);
    if (control.signal.aborted) return;
    if (!page) return clear(list, h("p", { class: "empty" }, "The jobs could not be read."));
    if (page.items.length === 0) return clear(list, h("p", { class: "empty", "data-testid": "no-jobs" }, "No bulk redelivery yet: filter the events, then Redeliver…"));
    clear(
      list,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list-table", "data-testid": "jobs" },
          h("thead", {}, h("tr", {}, ...["Started", "Events", "Progress", ""].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            ...page.items.map((job) => {
              const cancel = job.state === "running" ? h("button", { type: "button", class: "btn small danger", "data-testid": "cancel-job" }, "Cancel") : null;
              cancel?.addEventListener("click", async () => {
                cancel.disabled = true;
                await ctx.banner.guarded(() => ctx.client.redeliveries.cancel(ep.id, job.id));
                void load();
              });
              return h(
                "tr",
                { "data-testid": "job-row", "data-job-id": job.id, "data-state": job.state },
                h("td", {}, h("time", { datetime: job.createdAt, title: exactTime(job.createdAt) }, relativeTime(job.createdAt))),
                h("td", { class: "mono" }, describe(job.filter)),
                h("td", {}, progress(job)),
                h("td", {}, cancel),
              );
            }),
          ),
        ),
      ),
    );
    // Refreshed while one runs.
    if (page.items.some((j) => j.state === "running")) timer = setTimeout(() => void load(), 2000);
  }

  void load();
  return {
    element,
    dispose() {
      control.abort();
      if (timer) clearTimeout(timer);
    },
  };
}
