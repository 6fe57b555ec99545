import type { Banner } from "./banner.js";
import { clear, h } from "./dom.js";
import { logo } from "./logo.js";

/** The key form; `onKey` gets what was pasted, trimmed. The address (a shared link) is left as it is. */
export function renderLogin(root: HTMLElement, banner: Banner, onKey: (key: string) => void | Promise<void>): void {
  const input = h("input", { id: "api-key", type: "password", placeholder: "whc_…", "data-testid": "api-key", autocomplete: "off", required: true });
  const linked = location.hash.length > 2;
  const form = h(
    "form",
    { class: "login card", "aria-labelledby": "login-title" },
    h("h1", { id: "login-title" }, logo(), "Webhook Capture"),
    h("p", {}, linked ? "Enter an API key to open the linked view." : "Enter an API key to see your endpoints and their captures."),
    h("label", { for: "api-key", class: "field" }, "API key", input),
    h(
      "p",
      { class: "hint" },
      "It opens a dashboard session: a key of its own, kept in this tab's session storage for at most 12 hours and revoked when you sign out; never in the address, so links are safe to share.",
    ),
    h("button", { type: "submit", class: "btn primary", "data-testid": "use-key" }, "Continue"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (key) void onKey(key);
  });
  clear(root, h("main", { class: "login-page" }, banner.element, form));
  input.focus();
}
