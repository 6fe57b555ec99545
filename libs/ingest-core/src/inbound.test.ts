import { describe, it, expect } from "vitest";
import type { IncomingMessage } from "node:http";
import { inboundGuardOf } from "./inbound.js";

/** What the guard reads of a request: its method and headers (lower-case names, as Node gives them). */
const request = (method: string, headers: Record<string, string> = {}) => ({ method, headers }) as unknown as IncomingMessage;
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString("base64")}`;

describe("the inbound guard", () => {
  it("is nothing at all for an endpoint without protection, or with empty parts", () => {
    expect(inboundGuardOf(undefined)).toBeUndefined();
    expect(inboundGuardOf({})).toBeUndefined();
    expect(inboundGuardOf({ allowIps: [], methods: [] })).toBeUndefined();
  });

  it("matches IPv4 and IPv6 addresses and ranges, and refuses an unknown address", () => {
    const guard = inboundGuardOf({ allowIps: ["203.0.113.0/24", "198.51.100.7", "2001:db8::/32"] })!;
    const status = (ip: string) => guard.check(request("POST"), ip)?.status ?? 200;
    expect(["203.0.113.255", "198.51.100.7", "2001:db8:1::5"].map(status)).toEqual([200, 200, 200]);
    expect(["203.0.114.1", "198.51.100.8", "2001:db9::1", "", "not-an-ip"].map(status)).toEqual([403, 403, 403, 403, 403]);
  });

  it("checks credentials before the method, and names the Basic challenge only when basic auth is configured", () => {
    const guard = inboundGuardOf({ basicAuth: { username: "u", password: "p:with:colons" }, headerToken: { name: "X-Token", value: "t" }, methods: ["POST"] })!;
    const ok = { authorization: basic("u:p:with:colons"), "x-token": "t" };
    expect(guard.check(request("POST", ok), "192.0.2.1")).toBeUndefined();
    expect(guard.check(request("GET", {}), "192.0.2.1")).toMatchObject({ status: 401, headers: { "www-authenticate": 'Basic realm="webhook"' } });
    expect(guard.check(request("POST", { ...ok, authorization: basic("u:p") }), "192.0.2.1")?.status).toBe(401);
    expect(guard.check(request("POST", { ...ok, authorization: "Bearer x" }), "192.0.2.1")?.status).toBe(401);
    expect(guard.check(request("POST", { authorization: ok.authorization, "x-token": "t, t" }), "192.0.2.1")?.status).toBe(401);
    expect(guard.check(request("PUT", ok), "192.0.2.1")).toMatchObject({ status: 405, outcome: "rejected_method", headers: { allow: "POST" } });
    const tokenOnly = inboundGuardOf({ headerToken: { name: "X-Token", value: "t" } })!;
    expect(tokenOnly.check(request("POST"), "192.0.2.1")).toMatchObject({ status: 401, headers: {} });
  });
});
