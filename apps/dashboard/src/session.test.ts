import { afterEach, describe, expect, it, vi } from "vitest";
import { openSession } from "./session.js";

/** The gateway's answer to the session's POST /v1/keys, as the typed client reads it. */
function answering(status: number, body: unknown): void {
  vi.stubGlobal(
    "fetch",
    vi.fn(async () => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "x-request-id": "r1" } })),
  );
}

const refusal = (error: string, details: Record<string, unknown>) => ({ error, message: "m", details, requestId: "r1" });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("openSession (ADR 0052, ADR 0054)", () => {
  it("keeps the session key it opened", async () => {
    answering(201, { id: "k-id", key: "whc_session", name: "dashboard session" });
    expect(await openSession("whc_pasted")).toEqual({ key: "whc_session", id: "k-id" });
  });

  it("uses the pasted key as it is when the account holds all the keys its quota allows", async () => {
    answering(429, refusal("quota_exceeded", { quota: "keys", limit: 1000 }));
    expect(await openSession("whc_pasted")).toEqual({ key: "whc_pasted" });
  });

  it("leaves any other 429 to the caller", async () => {
    answering(429, refusal("quota_exceeded", { quota: "api_rate" }));
    await expect(openSession("whc_pasted")).rejects.toMatchObject({ status: 429, code: "quota_exceeded" });
  });
});
