import { isIP } from "node:net";
import { z } from "zod";
import { ConfigError, defineSetting, type Setting, type SettingOptions } from "./config.js";

/** The kinds of setting: each turns the text of one variable into a checked value. */

export function intSetting(name: string, description: string, fallback: number, min: number, max: number) {
  const schema = z.string().regex(/^-?\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
  return defineSetting(name, description, String(fallback), { schema, expectation: `an integer from ${min} to ${max}` });
}

/**
 * A byte count whose default is a share of another setting (`whole`), and which is never below
 * `floor`: set lower, start-up stops naming it; by default it is raised to it.
 */
export function shareOfSetting(
  name: string,
  description: string,
  whole: Setting<number>,
  share: number,
  floor: Setting<number>,
): Setting<number> {
  const schema = z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(2 ** 40));
  const setting = defineSetting(name, description, `<${whole.name}>/${share}`, { schema, expectation: "an integer from 1 to 1099511627776" }, {
    defaultFrom: (env) => String(Math.max(1, Math.floor(whole.parse(env[whole.name], env) / share))),
  });
  return {
    ...setting,
    parse(raw, env = {}) {
      const value = setting.parse(raw, env);
      const least = floor.parse(env[floor.name], env);
      if (value >= least) return value;
      if (raw?.trim()) throw new ConfigError(name, `must be at least ${floor.name} (${least}), got ${JSON.stringify(raw)}`);
      return least;
    },
  };
}

export function portSetting(name: string, description: string, fallback: number) {
  return intSetting(name, description, fallback, 0, 65535);
}

export function boolSetting(name: string, description: string, fallback: boolean) {
  const schema = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v));
  return defineSetting(name, description, String(fallback), { schema, expectation: "true or false" });
}

export function enumSetting<const T extends readonly [string, ...string[]]>(
  name: string,
  description: string,
  values: T,
  fallback: T[number],
) {
  return defineSetting(name, description, fallback, { schema: z.enum(values), expectation: `one of ${values.join(", ")}` });
}

/** An `http:`-style URL, its trailing slashes dropped. A string when it has a default. */
export function urlSetting<const D extends string | undefined>(
  name: string,
  description: string,
  fallback: D,
  protocols: readonly string[],
  options: SettingOptions = {},
) {
  const schema = z
    .string()
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol))
    .transform((v) => v.replace(/\/+$/, ""));
  return defineSetting(name, description, fallback, { schema, expectation: `a URL (${protocols.join(" or ")})` }, options);
}

/** A path to a file (its contents are checked by whoever reads it, naming this variable). */
export function fileSetting(name: string, description: string) {
  return defineSetting(name, description, undefined, { schema: z.string().min(1), expectation: "a file path" });
}

/**
 * A shared secret sent in a header: 32 to 512 visible ASCII characters (`openssl rand -hex 32`
 * makes one). Never repeated into logs.
 */
export function tokenSetting(name: string, description: string) {
  return defineSetting(name, description, undefined, {
    schema: z.string().regex(/^[\x21-\x7e]{32,512}$/),
    expectation: "32 to 512 visible ASCII characters, no spaces",
    secret: true,
  });
}

/** A directory; a blank value is refused rather than read as "use ./data", where nobody backs up keys. */
export function dirSetting(name: string, description: string, fallback: string) {
  return defineSetting(name, description, fallback, {
    schema: z.string().min(1),
    expectation: "a non-empty path",
    blankRefused: true,
  });
}

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*\\.?$`);

/** An IP address, or a DNS name whose last label is not all digits (`999.1.1.1` is a bad address, not a name). */
export function isHost(value: string): boolean {
  return isIP(value) !== 0 || (HOSTNAME.test(value) && !/(?:^|\.)\d+\.?$/.test(value));
}

export function hostSetting(name: string, description: string, fallback: string) {
  return defineSetting(name, description, fallback, {
    schema: z.string().refine(isHost),
    expectation: "an IP address or a hostname",
  });
}

/** The form Node reports a socket peer in, which ingest compares: IPv4 plain, IPv6 compressed and lower-case. */
export function canonicalIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped !== undefined && isIP(mapped) === 4) return mapped;
  if (isIP(ip) !== 6 || ip.includes("%")) return ip;
  return new URL(`http://[${ip}]`).hostname.slice(1, -1);
}

function commaList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Comma-separated IP addresses. Ingest trusts a peer only when its address is one of these
 * exactly, so ranges (CIDR) are refused rather than accepted and never matched.
 */
export function ipListSetting(name: string, description: string) {
  const schema = z
    .string()
    .transform(commaList)
    .pipe(z.array(z.string().refine((v) => isIP(v) !== 0)))
    .transform((ips) => ips.map(canonicalIp));
  return defineSetting(name, description, "", {
    schema,
    expectation: "comma-separated IP addresses (single addresses; CIDR ranges are not supported)",
  });
}

/**
 * `name:value,...` pairs; used for key rings and bootstrap keys. Absent: the empty list.
 * `distinct`: no name twice, as a key ring's ids must be.
 */
export function pairListSetting(
  name: string,
  description: string,
  valuePattern: RegExp,
  expectation: string,
  options: { distinct?: boolean } = {},
) {
  const pair = z.string().regex(new RegExp(`^[A-Za-z0-9._-]{1,64}:(?:${valuePattern.source})$`));
  const schema = z
    .string()
    .transform(commaList)
    .pipe(z.array(pair))
    .transform((items) =>
      items.map((item) => {
        const at = item.indexOf(":");
        return { name: item.slice(0, at), value: item.slice(at + 1) };
      }),
    )
    .refine((pairs) => !options.distinct || new Set(pairs.map((p) => p.name)).size === pairs.length);
  const names = options.distinct ? ", each name once" : "";
  return defineSetting(name, description, "", {
    schema,
    expectation: `a comma-separated list of name:${expectation}${names}`,
    secret: true,
  });
}

/** Exactly 32 bytes in standard base64: 43 characters and an optional `=`. */
export const BASE64_32_BYTES = /[A-Za-z0-9+/]{43}=?/;

export function keySetting(name: string, description: string) {
  return defineSetting(name, description, undefined, {
    schema: z.string().regex(new RegExp(`^${BASE64_32_BYTES.source}$`)),
    expectation: "the base64 of exactly 32 bytes",
    secret: true,
  });
}

/** The URI may carry a password: a bad one is not repeated into logs. */
export function mongoUriSetting(name: string, description: string) {
  return defineSetting(name, description, undefined, {
    schema: z.string().regex(/^mongodb(?:\+srv)?:\/\/[^/?#\s]+(?:[/?#]\S*)?$/),
    expectation: "a mongodb:// or mongodb+srv:// URI",
    secret: true,
  });
}

/** MongoDB's `w`: `majority` or a number of members; kept as text, as the store takes it. */
export function writeConcernSetting(name: string, description: string, fallback: "majority" | `${number}`) {
  const schema = z
    .string()
    .regex(/^(?:majority|\d{1,9})$/)
    .transform((v) => (v === "majority" ? v : (String(Number(v)) as `${number}`)));
  return defineSetting(name, description, fallback, { schema, expectation: "majority or a non-negative integer" });
}

/**
 * One NATS server as the client takes it from a string: an optional nats:// or tls:// and
 * host[:port]. The client reads a string as one server (a comma list would fail to connect)
 * and ignores credentials in it, so both are refused.
 */
export function natsServerSetting(name: string, description: string) {
  const schema = z.string().refine((v) => {
    const m = /^(?:(?:nats|tls):\/\/)?(\[[^\]]+\]|[^:/@[\],\s]+)(?::(\d{1,5}))?$/.exec(v);
    if (!m) return false;
    const host = m[1] as string;
    const hostOk = host.startsWith("[") ? isIP(host.slice(1, -1)) === 6 : isHost(host);
    return hostOk && (m[2] === undefined || (Number(m[2]) >= 1 && Number(m[2]) <= 65535));
  });
  return defineSetting(name, description, undefined, {
    schema,
    expectation: "one NATS server: nats://host[:port], tls://host[:port] or host[:port], without credentials",
  });
}
