import type { EndpointJson } from "@whc/api-model";
import { countPerMinute, MAX_EVENTS, readWindow, sum, WINDOW_MINUTES, type Stats } from "./chart-data.js";
import { clear, h, s } from "./dom.js";
import { clockTime, plural } from "./format.js";
import type { AppContext, EndpointTab, Mounted } from "./views.js";

interface Part {
  label: string;
  cls: string;
  values: readonly number[];
}

const W = 600;
const H = 120;

/** Stacked bars, one per minute, in plain SVG: ADR 0021 says why no chart library. */
function bars(title: string, parts: readonly Part[], stats: Stats): SVGSVGElement {
  const totals = parts[0]!.values.map((_, i) => sum(parts.map((p) => p.values[i]!)));
  const max = Math.max(1, ...totals);
  const step = W / WINDOW_MINUTES;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "chart-svg", role: "img", "aria-label": title });
  for (const y of [0.5, 1]) svg.append(s("line", { x1: "0", x2: String(W), y1: String(H - y * H + 0.5), y2: String(H - y * H + 0.5), class: "grid" }));
  for (let i = 0; i < WINDOW_MINUTES; i++) {
    let y = H;
    const at = clockTime(new Date(stats.start + i * 60_000).toISOString()).slice(0, 5);
    for (const p of parts) {
      const v = p.values[i]!;
      if (!v) continue;
      const height = Math.max(1, (v / max) * (H - 4));
      y -= height;
      svg.append(s("rect", { x: String(i * step + 1), y: String(y), width: String(step - 2), height: String(height), class: p.cls }, s("title", {}, `${at}: ${v} ${p.label}`)));
    }
  }
  if (stats.capped) {
    const cut = ((stats.countedFrom - stats.start) / 60_000) * step;
    if (cut > 0) svg.append(s("rect", { x: "0", y: "0", width: String(cut), height: String(H), class: "not-counted" }, s("title", {}, "not counted: past the bound")));
  }
  return svg;
}

function chart(title: string, summary: string, parts: readonly Part[], stats: Stats, testid: string): HTMLElement {
  const max = Math.max(...parts[0]!.values.map((_, i) => sum(parts.map((p) => p.values[i]!))));
  return h(
    "figure",
    { class: "chart card", "data-testid": testid },
    h("figcaption", {}, h("strong", {}, title), h("span", { class: "hint" }, summary)),
    h("div", { class: "chart-frame" }, h("span", { class: "y-max", "aria-hidden": "true" }, `${max}/min`), bars(`${title}: ${summary}`, parts, stats)),
    h("div", { class: "x-axis", "aria-hidden": "true" }, h("span", {}, `${WINDOW_MINUTES} min ago`), h("span", {}, "30 min ago"), h("span", {}, "now")),
    parts.length > 1 ? h("ul", { class: "legend" }, ...parts.map((p) => h("li", {}, h("span", { class: `swatch ${p.cls}` }), `${p.label} ${sum(p.values)}`))) : null,
  );
}

function percent(n: number, of: number): string {
  return of ? ` (${((100 * n) / of).toFixed(1).replace(/\.0$/, "")} %)` : "";
}

function charts(stats: Stats): HTMLElement[] {
  const total = sum(stats.captures);
  const failed = sum(stats.failed);
  const forwarded = sum(stats.delivered) + sum(stats.pending) + sum(stats.forwardFailed) + sum(stats.exhausted);
  return [
    chart("Captures per minute", `${plural(total, "capture")}, peak ${Math.max(...stats.captures)}/min`, [{ label: "captures", cls: "c-captures", values: stats.captures }], stats, "chart-captures"),
    chart(
      "Signature verification",
      `${plural(failed, "failure")}${percent(failed, total)}`,
      [
        { label: "failed", cls: "c-failed", values: stats.failed },
        { label: "verified", cls: "c-verified", values: stats.verified },
        { label: "unverified", cls: "c-unverified", values: stats.unverified },
      ],
      stats,
      "chart-verification",
    ),
    chart(
      "Delivery outcomes",
      forwarded ? `${plural(forwarded, "forwarded event")}, ${sum(stats.delivered)} delivered` : "nothing forwarded in the window",
      [
        { label: "delivered", cls: "c-delivered", values: stats.delivered },
        { label: "pending", cls: "c-pending", values: stats.pending },
        { label: "failed", cls: "c-forward-failed", values: stats.forwardFailed },
        { label: "exhausted", cls: "c-exhausted", values: stats.exhausted },
      ],
      stats,
      "chart-deliveries",
    ),
  ];
}

function mountCharts(ctx: AppContext, ep: EndpointJson): Mounted {
  const note = h("p", { class: "hint", "data-testid": "chart-window" });
  const grid = h("div", { class: "charts", "aria-live": "polite", "aria-busy": "true" }, h("p", { class: "hint" }, "Counting…"));
  const refresh = h("button", { type: "button", class: "btn small", "data-testid": "refresh-charts" }, "Refresh");
  const element = h("div", { class: "charts-view" }, h("div", { class: "row" }, note, h("span", { class: "spacer" }), refresh), grid);
  let control = new AbortController();

  async function load(): Promise<void> {
    control.abort();
    control = new AbortController();
    const signal = control.signal;
    refresh.disabled = true;
    grid.setAttribute("aria-busy", "true");
    const now = Date.now();
    const w = await ctx.banner.guarded(() => readWindow((q, sig) => ctx.client.events.list(ep.id, q, sig), now, signal));
    if (signal.aborted) return;
    refresh.disabled = false;
    grid.setAttribute("aria-busy", "false");
    if (!w) return clear(grid, h("p", { class: "empty" }, "The events could not be read."));
    const stats = countPerMinute(w);
    clear(
      note,
      `The last ${WINDOW_MINUTES} minutes, to ${clockTime(new Date(now).toISOString()).slice(0, 8)}, from the event list. `,
      stats.capped
        ? h("strong", { class: "capped", "data-testid": "chart-capped" }, `Capped: only the newest ${plural(MAX_EVENTS, "event")} were counted, back to ${clockTime(new Date(stats.countedFrom).toISOString()).slice(0, 8)}; the shaded part is not counted.`)
        : null,
    );
    clear(grid, ...charts(stats));
  }

  refresh.addEventListener("click", () => void load());
  void load();
  return { element, dispose: () => control.abort() };
}

export const chartsTab: EndpointTab = { segment: "charts", label: "Charts", mount: mountCharts };
