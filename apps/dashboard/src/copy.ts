import { h } from "./dom.js";

/** Copies `text`; the button says whether that worked, then shows its label again. */
export async function copy(text: string, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy";
  }
  setTimeout(() => (button.textContent = button.dataset.label ?? "Copy"), 1500);
}

export function copyButton(label: string, text: () => string, testid: string): HTMLButtonElement {
  const button = h("button", { type: "button", "data-testid": testid, "data-label": label }, label);
  button.addEventListener("click", () => void copy(text(), button));
  return button;
}
