import { BlockList, isIP } from "node:net";

export type AddressCategory =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "unique_local"
  | "multicast"
  | "unspecified"
  | "metadata"
  | "broadcast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "invalid";

type Rule = [category: AddressCategory, network: string, prefix: number];

// Most specific first: the first rule that matches names the category.
const V4_RULES: Rule[] = [
  ["metadata", "169.254.169.254", 32],
  ["metadata", "169.254.170.2", 32], // ECS task metadata
  ["metadata", "100.100.100.200", 32], // Alibaba Cloud metadata
  ["broadcast", "255.255.255.255", 32],
  ["unspecified", "0.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["cgnat", "100.64.0.0", 10],
  ["loopback", "127.0.0.0", 8],
  ["link_local", "169.254.0.0", 16],
  ["private", "172.16.0.0", 12],
  ["reserved", "192.0.0.0", 24],
  ["documentation", "192.0.2.0", 24],
  ["reserved", "192.88.99.0", 24],
  ["private", "192.168.0.0", 16],
  ["benchmarking", "198.18.0.0", 15],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["multicast", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4],
];

const V6_RULES: Rule[] = [
  ["metadata", "fd00:ec2::254", 128], // AWS IMDS over IPv6
  ["unspecified", "::", 128],
  ["loopback", "::1", 128],
  ["reserved", "::", 96], // IPv4-compatible, deprecated
  ["reserved", "100::", 64], // discard-only
  ["reserved", "2001::", 23], // IETF protocol assignments (Teredo, ORCHID...)
  ["documentation", "2001:db8::", 32],
  ["reserved", "2002::", 16], // 6to4: tunnels to arbitrary IPv4
  ["documentation", "3fff::", 20],
  ["unique_local", "fc00::", 7],
  ["link_local", "fe80::", 10],
  ["reserved", "fec0::", 10], // site-local, deprecated
  ["multicast", "ff00::", 8],
];

function compile(rules: Rule[], family: "ipv4" | "ipv6"): [AddressCategory, BlockList][] {
  return rules.map(([category, network, prefix]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [category, list];
  });
}

const v4 = compile(V4_RULES, "ipv4");
const v6 = compile(V6_RULES, "ipv6");
const MAPPED = new BlockList();
MAPPED.addSubnet("::ffff:0:0", 96, "ipv6");
const NAT64 = new BlockList();
NAT64.addSubnet("64:ff9b::", 96, "ipv6");

/** The IPv4 address in the low 32 bits of an IPv6 address. */
function embeddedV4(ip: string): string {
  const full = expandV6(ip);
  const hi = parseInt(full[6] as string, 16);
  const lo = parseInt(full[7] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function expandV6(ip: string): string[] {
  let text = ip.toLowerCase();
  // A dotted tail (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = (dotted[1] as string).split(".").map(Number) as [number, number, number, number];
    text = text.slice(0, -(dotted[1] as string).length) + `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...fill, ...right];
}

export interface Classified {
  readonly category: AddressCategory;
  readonly allowed: boolean;
}

/**
 * The addresses classified lately: a literal address's category never changes, and judging one
 * costs a `SocketAddress` per rule tried (`BlockList.check` makes one from the string), about
 * 16 µs for a public IPv4 address, which tries them all. At most SEEN_MAX, then forgotten at once.
 */
const seen = new Map<string, Classified>();
const SEEN_MAX = 1024;

/**
 * Classifies a literal IP address. Only public unicast is allowed; an IPv4-mapped or NAT64
 * IPv6 address is judged by the IPv4 address it carries.
 */
export function classifyAddress(ip: string): Classified {
  const known = seen.get(ip);
  if (known) return known;
  const classified = Object.freeze(classifyNew(ip));
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.set(ip, classified);
  return classified;
}

function classifyNew(ip: string): Classified {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) {
    for (const [category, list] of v4) if (list.check(bare, "ipv4")) return { category, allowed: false };
    return { category: "public", allowed: true };
  }
  if (family === 6) {
    if (MAPPED.check(bare, "ipv6") || NAT64.check(bare, "ipv6")) return classifyAddress(embeddedV4(bare));
    for (const [category, list] of v6) if (list.check(bare, "ipv6")) return { category, allowed: false };
    return { category: "public", allowed: true };
  }
  return { category: "invalid", allowed: false };
}
