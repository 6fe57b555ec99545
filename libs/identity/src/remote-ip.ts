import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/**
 * One X-Forwarded-For entry as an address: some proxies (Azure's among them) append the
 * port, as `203.0.113.5:4711` or `[2001:db8::1]:4711`.
 */
function forwardedAddress(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1] as string;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return v4WithPort ? (v4WithPort[1] as string) : entry;
}

export function normaliseIp(address: string | undefined): string {
  if (!address) return "";
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The sender's address: the socket peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right past trusted proxies to the first other address.
 */
export function remoteIpOf(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string {
  const peer = normaliseIp(req.socket.remoteAddress);
  if (!trustedProxies.has(peer)) return peer;
  const forwarded = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? ""))
    .split(",")
    .map((s) => normaliseIp(forwardedAddress(s.trim())))
    .filter((s) => isIP(s) !== 0);
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const hop = chain[i] as string;
    if (!trustedProxies.has(hop)) return hop;
  }
  return chain[0] ?? peer;
}
