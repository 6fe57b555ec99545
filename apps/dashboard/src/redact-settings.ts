import type { EndpointJson, RedactSettings } from "@whc/api-model";
import { h } from "./dom.js";

/** What the endpoint redacts before storing (design §16): one entry per line in each list. */
export interface RedactFields {
  readonly element: HTMLElement;
  /** The lists as typed, empty ones left out. */
  lists(): RedactSettings;
  /** Shows why the lists were not saved; hidden again with undefined. */
  problem(text: string | undefined): void;
}

function lines(area: HTMLTextAreaElement): string[] | undefined {
  const entries = area.value
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  return entries.length > 0 ? entries : undefined;
}

function area(testId: string, placeholder: string, values: string[] | undefined): HTMLTextAreaElement {
  return h("textarea", { class: "json mono", rows: "3", spellcheck: "false", placeholder, "data-testid": testId }, (values ?? []).join("\n"));
}

export function redactFields(ep: EndpointJson): RedactFields {
  const headers = area("edit-redact-headers", "authorization", ep.redact?.headers);
  const jsonPaths = area("edit-redact-json-paths", "$.card.number", ep.redact?.jsonPaths);
  const patterns = area("edit-redact-patterns", "\\b\\d{13,19}\\b", ep.redact?.patterns);
  const problem = h("p", { class: "problem", role: "alert", "data-testid": "redact-problem", hidden: true });
  const field = (label: string, control: HTMLElement, hint: string) =>
    h("label", { class: "field" }, h("span", { class: "label" }, label), control, h("span", { class: "hint" }, hint));
  const element = h(
    "div",
    { class: "redact", "data-testid": "redact-settings" },
    h("p", { class: "hint" }, "Replaced before a capture is stored and indexed, after its signature is checked. Captures stored earlier stay as they were."),
    field("Headers", headers, "One header name per line: its values are stored as [redacted]."),
    field("JSON paths", jsonPaths, 'One per line: $ then .name, [n] or [*] steps. The value is stored as "[redacted]", every other byte as sent.'),
    field("Patterns", patterns, "One regular expression per line, every repetition bounded ({m,n}, not * or +). Matches in text bodies are stored as [redacted]."),
    problem,
  );
  return {
    element,
    lists() {
      const [h1, j1, p1] = [lines(headers), lines(jsonPaths), lines(patterns)];
      return { ...(h1 ? { headers: h1 } : {}), ...(j1 ? { jsonPaths: j1 } : {}), ...(p1 ? { patterns: p1 } : {}) };
    },
    problem(text) {
      problem.hidden = text === undefined;
      problem.textContent = text ? `Redaction not saved: ${text}` : "";
    },
  };
}
