import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import type { InboundSecrets } from "@whc/api-model";

/**
 * An endpoint's inbound protection (design §16), prepared once per endpoint lookup: who may
 * send. Checked before the body is read; secrets are compared in constant time, as digests of
 * equal length. The order (address, credentials, method) tells a sender from elsewhere nothing
 * about the credentials or methods, and one without credentials nothing about the methods.
 */
export interface InboundGuard {
  /** Why the request is refused, or undefined when it may be captured. */
  check(req: IncomingMessage, remoteIp: string): InboundRefusal | undefined;
}

export type InboundOutcome = "rejected_address" | "rejected_auth" | "rejected_method";

export interface InboundRefusal {
  status: 401 | 403 | 405;
  outcome: InboundOutcome;
  error: "unauthorized" | "forbidden" | "method_not_allowed";
  message: string;
  headers: Record<string, string>;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
const sameSecret = (given: string, expected: Buffer) => timingSafeEqual(digest(given), expected);

/** Node joins a repeated custom header with ", "; a header sent twice does not carry the token. */
function headerValue(req: IncomingMessage, lowerName: string): string | undefined {
  const value = req.headers[lowerName];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The user:pass of `Authorization: Basic ...`, or undefined. */
function basicCredentials(req: IncomingMessage): string | undefined {
  const m = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(req.headers.authorization ?? "");
  return m ? Buffer.from(m[1] as string, "base64").toString("utf8") : undefined;
}

function allowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

const refusals = {
  address: (): InboundRefusal => ({
    status: 403,
    outcome: "rejected_address",
    error: "forbidden",
    message: "This endpoint does not accept requests from this address.",
    headers: {},
  }),
  auth: (basic: boolean): InboundRefusal => ({
    status: 401,
    outcome: "rejected_auth",
    error: "unauthorized",
    message: "This endpoint requires credentials.",
    headers: basic ? { "www-authenticate": 'Basic realm="webhook"' } : {},
  }),
  method: (allow: string): InboundRefusal => ({
    status: 405,
    outcome: "rejected_method",
    error: "method_not_allowed",
    message: "This endpoint does not accept this method.",
    headers: { allow },
  }),
};

/** The guard of an endpoint's protection; undefined when it has none (the capture path then checks nothing). */
export function inboundGuardOf(settings: InboundSecrets | undefined): InboundGuard | undefined {
  if (!settings) return undefined;
  const { basicAuth, headerToken, allowIps, methods } = settings;
  if (!basicAuth && !headerToken && !allowIps?.length && !methods?.length) return undefined;
  const allowed = allowIps?.length ? allowList(allowIps) : undefined;
  const basic = basicAuth && digest(`${basicAuth.username}:${basicAuth.password}`);
  const token = headerToken && { name: headerToken.name.toLowerCase(), value: digest(headerToken.value) };
  const methodSet = methods?.length ? new Set(methods) : undefined;
  const allow = methods?.join(", ") ?? "";
  return {
    check(req, remoteIp) {
      if (allowed) {
        const family = isIP(remoteIp);
        if (family === 0 || !allowed.check(remoteIp, family === 6 ? "ipv6" : "ipv4")) return refusals.address();
      }
      if (basic) {
        const given = basicCredentials(req);
        if (given === undefined || !sameSecret(given, basic)) return refusals.auth(true);
      }
      if (token) {
        const given = headerValue(req, token.name);
        if (given === undefined || !sameSecret(given, token.value)) return refusals.auth(basic !== undefined);
      }
      if (methodSet && !methodSet.has(req.method ?? "")) return refusals.method(allow);
      return undefined;
    },
  };
}
