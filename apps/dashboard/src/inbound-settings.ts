import type { EndpointJson, InboundSettings, UpdateEndpointRequest } from "@whc/api-model";
import { h } from "./dom.js";

/** Who may send to the webhook URL (design §16): basic auth, a header token, addresses, methods. */
export interface InboundFields {
  readonly element: HTMLElement;
  /** What differs from `ep`: the whole protection when any part changed, null when every field was emptied. */
  changes(ep: EndpointJson): Pick<UpdateEndpointRequest, "inbound">;
}

/** Entries separated by commas, spaces or lines. */
function list(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function refusedText(ep: EndpointJson): string {
  if (!ep.inbound) return "Anyone who knows the URL may send.";
  return `${ep.rejectedCount} request${ep.rejectedCount === 1 ? "" : "s"} refused so far (401, 403 or 405; none stored).`;
}

function labelled(label: string, control: HTMLElement): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control);
}

/** A write-only secret's field: empty, saying whether one is set (typing replaces it). */
function secretInput(isSet: boolean, placeholder: string, testId: string): HTMLInputElement {
  return h("input", { type: "password", autocomplete: "new-password", maxlength: "1024", placeholder: isSet ? "set (type to replace)" : placeholder, "data-testid": testId });
}

export function inboundFields(ep: EndpointJson): InboundFields {
  const i = ep.inbound;
  const username = h("input", { maxlength: "200", autocomplete: "off", placeholder: "user name", value: i?.basicAuth?.username ?? "", "data-testid": "edit-inbound-username" });
  const password = secretInput(i?.basicAuth?.passwordSet === true, "password", "edit-inbound-password");
  const tokenName = h("input", { maxlength: "100", autocomplete: "off", placeholder: "e.g. X-Hook-Token", value: i?.headerToken?.name ?? "", "data-testid": "edit-inbound-token-name" });
  const tokenValue = secretInput(i?.headerToken?.valueSet === true, "token value", "edit-inbound-token-value");
  const allowIps = h("textarea", { class: "mono", rows: "2", spellcheck: "false", placeholder: "203.0.113.0/24, 2001:db8::/32", "data-testid": "edit-inbound-allow-ips" }, (i?.allowIps ?? []).join("\n"));
  const methods = h("input", { autocomplete: "off", placeholder: "e.g. POST", value: (i?.methods ?? []).join(", "), "data-testid": "edit-inbound-methods" });

  const element = h(
    "div",
    { class: "inbound-fields", "data-testid": "inbound-settings" },
    h("p", { class: "hint", "data-testid": "inbound-state" }, refusedText(ep)),
    labelled("Basic auth user", username),
    labelled("Basic auth password", password),
    labelled("Header token name", tokenName),
    labelled("Header token value", tokenValue),
    labelled("Allowed addresses (IP or CIDR; empty: any)", allowIps),
    labelled("Allowed methods (empty: any)", methods),
  );

  return {
    element,
    changes(current) {
      const user = username.value.trim();
      const name = tokenName.value.trim();
      const ips = list(allowIps.value);
      const verbs = list(methods.value).map((m) => m.toUpperCase());
      const next: InboundSettings = {
        ...(user ? { basicAuth: { username: user, ...(password.value ? { password: password.value } : {}) } } : {}),
        ...(name ? { headerToken: { name, ...(tokenValue.value ? { value: tokenValue.value } : {}) } } : {}),
        ...(ips.length ? { allowIps: ips } : {}),
        ...(verbs.length ? { methods: verbs } : {}),
      };
      const was = current.inbound;
      if (Object.keys(next).length === 0) return was ? { inbound: null } : {};
      const same =
        was !== undefined &&
        (was.basicAuth?.username ?? "") === user &&
        (was.headerToken?.name ?? "") === name &&
        (was.allowIps ?? []).join(",") === ips.join(",") &&
        (was.methods ?? []).join(",") === verbs.join(",") &&
        !password.value &&
        !tokenValue.value;
      return same ? {} : { inbound: next };
    },
  };
}
