import { h } from "./dom.js";

/** Copies `text`; the button says whether that worked, then shows its label again. */
export async function copy(text: string, button: HTMLButtonElement): Promise<void> {
  const label = button.dataset.label ?? button.textContent ?? "Copy";
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy";
  }
  setTimeout(() => (button.textContent = label), 1500);
}

/** A copy button; `name` is what screen readers hear ("Copy webhook URL") when the label is short. */
export function copyButton(label: string, text: () => string, testid: string, name?: string): HTMLButtonElement {
  const button = h("button", { type: "button", class: "btn small", "data-testid": testid, "data-label": label, "aria-label": name }, label);
  button.addEventListener("click", () => void copy(text(), button));
  return button;
}
