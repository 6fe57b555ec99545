import type { Banner } from "./banner.js";
import { clear, h } from "./dom.js";

/** The key form; `onKey` gets what was pasted, trimmed. */
export function renderLogin(root: HTMLElement, banner: Banner, onKey: (key: string) => void): void {
  const input = h("input", { type: "password", placeholder: "whc_…", "aria-label": "API key", "data-testid": "api-key", autocomplete: "off" });
  const form = h(
    "form",
    { class: "login" },
    h("h1", {}, "Webhook Capture"),
    h("p", {}, "Paste an API key. It is kept in this tab's session storage only, never in a URL."),
    input,
    h("button", { type: "submit", "data-testid": "use-key" }, "Use key"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (key) onKey(key);
  });
  clear(root, banner.element, form);
}
