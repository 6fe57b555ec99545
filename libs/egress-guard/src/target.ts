import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { classifyAddress, type AddressCategory } from "./classify.js";

export type TargetRefusal =
  | "bad_url"
  | "scheme_not_allowed"
  | "credentials_in_url"
  | "address_not_allowed"
  | "dns_failure"
  | "port_not_allowed"
  /** One of the deployment's own internal services (createEgressGuard's `internal`). */
  | "internal_service";

export interface ParsedTarget {
  url: URL;
  /** Without brackets or a trailing dot. */
  hostname: string;
  /** The host when it is an IP literal. */
  literalIp: string | undefined;
  port: number;
}

/**
 * Only http: and https:, no userinfo. WHATWG URL parsing already turns every IPv4 spelling
 * (decimal, hex, octal, short forms, trailing dot) into dotted quad and canonicalises IPv6,
 * so the address checks below see one spelling per address.
 */
export function parseTargetUrl(text: string): { ok: true; target: ParsedTarget } | { ok: false; reason: TargetRefusal } {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, reason: "bad_url" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: "scheme_not_allowed" };
  if (url.username || url.password) return { ok: false, reason: "credentials_in_url" };
  const hostname = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (!hostname) return { ok: false, reason: "bad_url" };
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  if (port < 1 || port > 65535) return { ok: false, reason: "port_not_allowed" };
  return { ok: true, target: { url, hostname, literalIp: isIP(hostname) ? hostname : undefined, port } };
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface VetOptions {
  allowPrivate: boolean;
  resolver?: Resolver;
}

export type Vetted =
  | { ok: true; target: ParsedTarget; address: string; family: 4 | 6 }
  | { ok: false; reason: TargetRefusal; category?: AddressCategory };

/**
 * Resolves the host once and checks every address it resolves to; the caller connects to
 * the returned address and never resolves again, so a second DNS answer cannot differ
 * (no rebinding between the check and the connection).
 */
export async function vetTarget(text: string, options: VetOptions): Promise<Vetted> {
  const parsed = parseTargetUrl(text);
  if (!parsed.ok) return parsed;
  const { target } = parsed;
  let answers: { address: string; family: 4 | 6 }[];
  if (target.literalIp) {
    answers = [{ address: target.literalIp, family: isIP(target.literalIp) === 6 ? 6 : 4 }];
  } else {
    try {
      answers = await (options.resolver ?? systemResolver)(target.hostname);
    } catch {
      return { ok: false, reason: "dns_failure" };
    }
    if (answers.length === 0) return { ok: false, reason: "dns_failure" };
  }
  for (const answer of answers) {
    const { category, allowed } = classifyAddress(answer.address);
    // Cloud metadata stays refused even when private targets are allowed for development.
    if (category === "invalid" || category === "metadata" || (!allowed && !options.allowPrivate)) {
      return { ok: false, reason: "address_not_allowed", category };
    }
  }
  const first = answers[0] as { address: string; family: 4 | 6 };
  return { ok: true, target, address: first.address, family: first.family };
}
