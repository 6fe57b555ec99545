import { describe, it, expect } from "vitest";
import type { EventDetailJson } from "@whc/api-model";
import { bodyBytes, localRequest, localTarget, nextAttemptNumber, wireValue } from "./local-request.js";

const detail = (over: Partial<EventDetailJson> = {}): EventDetailJson => ({
  id: "0190b6a0-0000-7000-8000-000000000001",
  endpointId: "0190b6a0-0000-7000-8000-0000000000aa",
  receivedAt: "2026-11-23T10:00:00.000Z",
  method: "PUT",
  provider: "generic",
  verification: "unverified",
  responseCode: 200,
  truncated: false,
  originalSizeBytes: 2,
  decryption: "ok",
  path: "",
  headers: {},
  remoteIp: "127.0.0.1",
  body: "{}",
  bodyEncoding: "utf8",
  diagnostic: {},
  forwardedResponse: {},
  ...over,
});

describe("the request whc listen sends", () => {
  it("appends the capture's sub-path and query to --forward-to, as they came", () => {
    const to = (u: string, p: string) => localTarget(new URL(u), p);
    expect(to("http://localhost:3000/hooks", "/ci?x=1")).toBe("/hooks/ci?x=1");
    expect(to("http://localhost:3000/hooks/", "/ci")).toBe("/hooks/ci");
    expect(to("http://localhost:3000", "")).toBe("/");
    expect(to("http://localhost:3000", "/a%2Fb/c?q=%20&q=2")).toBe("/a%2Fb/c?q=%20&q=2");
    expect(to("http://localhost:3000/hooks", "?only=query")).toBe("/hooks?only=query");
    expect(to("http://localhost:3000/hooks?token=t", "/ci?x=1")).toBe("/hooks/ci?token=t&x=1");
    expect(to("http://localhost:3000/hooks", "/ci?")).toBe("/hooks/ci?");
    expect(to("http://localhost:3000/hooks", "/ci#frag")).toBe("/hooks/ci");
  });

  it("sends header values that were UTF-8 as UTF-8 bytes, ASCII as it is", () => {
    expect(wireValue("t=1,v1=abc")).toBe("t=1,v1=abc");
    expect(Buffer.from(wireValue("café"), "latin1")).toEqual(Buffer.from("café", "utf8"));
  });

  it("takes the body's exact bytes from text or base64", () => {
    const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x41]);
    expect(bodyBytes({ body: bytes.toString("base64"), bodyEncoding: "base64" })).toEqual(bytes);
    expect(bodyBytes({ body: "\uFEFFhé", bodyEncoding: "utf8" })).toEqual(Buffer.from("\uFEFFhé", "utf8"));
    expect(bodyBytes({ body: undefined, bodyEncoding: undefined })).toBeUndefined();
  });

  it("numbers the attempt after the event's last", () => {
    expect(nextAttemptNumber(detail())).toBe(1);
    const attempt = { trigger: "retry", at: "2026-11-23T10:00:00.000Z", url: "http://x", durationMs: 1, status: 500, headers: {}, bodyBase64: "", bodyTruncated: false, error: null } as const;
    const fr = { state: "pending", target: "http://x", nextAttemptAt: null, attempts: [{ ...attempt, n: 1 }, { ...attempt, n: 3 }] } as const;
    expect(nextAttemptNumber(detail({ forwardedResponse: { ...fr, attempts: [...fr.attempts] } }))).toBe(4);
  });

  it("keeps the captured headers in order but the hop's own and earlier delivery headers, and adds its delivery headers", () => {
    const req = localRequest({
      forwardTo: new URL("http://127.0.0.1:3000/in"),
      detail: detail({
        path: "/sub?x=1",
        headers: {
          Host: ["ingest.example"],
          "Content-Type": ["application/json"],
          "Content-Length": ["2"],
          Connection: ["keep-alive"],
          "Stripe-Signature": ["t=1,v1=abc"],
          "X-Multi": ["one", "two"],
          "X-Forwarded-For": ["203.0.113.9"],
          "X-Whc-Attempt": ["7"],
          "Transfer-Encoding": ["chunked"],
        },
      }),
      body: Buffer.from("{}"),
      attempt: 2,
    });
    expect(req.origin.origin).toBe("http://127.0.0.1:3000");
    expect(req.path).toBe("/in/sub?x=1");
    expect(req.method).toBe("PUT");
    expect(req.headers).toEqual([
      ["Content-Type", "application/json"],
      ["Stripe-Signature", "t=1,v1=abc"],
      ["X-Multi", "one"],
      ["X-Multi", "two"],
      ["X-Whc-Delivery-Id", "0190b6a0-0000-7000-8000-000000000001"],
      ["X-Whc-Attempt", "2"],
    ]);
  });
});
