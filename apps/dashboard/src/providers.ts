import type { ProviderInfoJson } from "@whc/api-model";
import { clear, h } from "./dom.js";

function providerOption(p: ProviderInfoJson): HTMLOptionElement {
  return h("option", { value: p.name, title: p.secretFormat.description }, p.label);
}

/** A provider picker's options, from `GET /v1/providers`; `selected` stays chosen. */
export function fillProviders(select: HTMLSelectElement, items: readonly ProviderInfoJson[], selected?: string): void {
  clear(select, ...items.map(providerOption));
  if (selected !== undefined) select.value = selected;
}
