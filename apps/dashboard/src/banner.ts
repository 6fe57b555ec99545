import { ApiError } from "@whc/api-model";
import { h } from "./dom.js";

/** The one place failures are shown: the reply's message and its request id. */
export interface Banner {
  readonly element: HTMLElement;
  show(err: unknown): void;
  hide(): void;
  /** Runs `work`; a failure is shown and gives undefined, a success hides the last failure. */
  guarded<T>(work: () => Promise<T>): Promise<T | undefined>;
}

function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === "AbortError";
}

/** A refusal's `details.reason` (target_not_allowed's scheme, loopback, port…), which the message points to. */
function reasonOf(err: ApiError): string {
  const reason = err.details["reason"];
  return typeof reason === "string" && reason !== "" ? ` Reason: ${reason}.` : "";
}

export function createBanner(onUnauthorized: () => void): Banner {
  const element = h("div", { class: "banner", role: "alert", "data-testid": "error", hidden: true });

  function show(err: unknown): void {
    if (isAbort(err)) return;
    element.textContent = ApiError.is(err)
      ? `${err.message}${reasonOf(err)}${err.requestId ? ` (request ${err.requestId})` : ""}`
      : `Cannot reach the service: ${(err as Error).message}`;
    element.hidden = false;
    if (ApiError.is(err) && err.code === "unauthorized") onUnauthorized();
  }

  function hide(): void {
    element.hidden = true;
  }

  async function guarded<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      const value = await work();
      hide();
      return value;
    } catch (err) {
      show(err);
      return undefined;
    }
  }

  return { element, show, hide, guarded };
}
