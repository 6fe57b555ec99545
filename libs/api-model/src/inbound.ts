import { z } from "zod";
import { extension, headerName } from "./common.js";

/**
 * An endpoint's inbound protection (design §16): who may send to its webhookUrl. Checked by
 * ingest before the body is read; a request that fails is answered 401, 403 or 405, is not
 * stored, and counts in the endpoint's `rejectedCount`. Secrets are write-only.
 */

/** Limits of the inbound settings. */
export const INBOUND_LIMITS = { allowIps: 100, methods: 20, secretLength: 1024, usernameLength: 200 } as const;

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function isIpv6(text: string): boolean {
  if (!/^[0-9A-Fa-f:.]{2,45}$/.test(text) || !text.includes(":")) return false;
  try {
    return new URL(`http://[${text}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

/** `203.0.113.7`, `203.0.113.0/24`, `2001:db8::1` or `2001:db8::/32`: what an allow list entry may be. */
export function isAddressOrRange(text: string): boolean {
  const [address = "", prefix, ...rest] = text.split("/");
  if (rest.length > 0) return false;
  const v4 = IPV4.test(address);
  if (!v4 && !isIpv6(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (v4 ? 32 : 128);
}

const allowIpsEntry = z
  .string()
  .max(64)
  .refine(isAddressOrRange, { message: "an IP address or CIDR range", params: { reason: "format" } })
  .meta({ description: "An IPv4 or IPv6 address, or a CIDR range." });

/** An HTTP method as senders send it (upper case). */
const method = z.string().regex(/^[A-Z][A-Z0-9_-]{0,19}$/);

const secret = z.string().min(1).max(INBOUND_LIMITS.secretLength);

export const inboundSettings = z
  .strictObject({
    basicAuth: z
      .strictObject({
        username: z
          .string()
          .min(1)
          .max(INBOUND_LIMITS.usernameLength)
          .refine((name) => !/[:]/.test(name) && ![...name].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f), {
            message: "no colon or control character",
            params: { reason: "format" },
          }),
        password: secret
          .optional()
          .meta({ writeOnly: true, description: "Required unless a password is already set, which a PATCH without one keeps." }),
      })
      .optional()
      .meta({ description: "HTTP Basic credentials senders must present (401 with `WWW-Authenticate: Basic realm=\"webhook\"` otherwise)." }),
    headerToken: z
      .strictObject({
        name: headerName,
        value: secret.optional().meta({ writeOnly: true, description: "Required unless a value is already set, which a PATCH without one keeps." }),
      })
      .optional()
      .meta({ description: "A header senders must carry with exactly this value (401 otherwise)." }),
    allowIps: z
      .array(allowIpsEntry)
      .min(1)
      .max(INBOUND_LIMITS.allowIps)
      .optional()
      .meta({ description: "Addresses or ranges senders must come from (403 otherwise); X-Forwarded-For counts only from WHC_TRUSTED_PROXIES." }),
    methods: z
      .array(method)
      .min(1)
      .max(INBOUND_LIMITS.methods)
      .optional()
      .meta({ description: "The only methods accepted (405 with `Allow` otherwise)." }),
  })
  .meta({ ...extension, description: "Who may send to the webhookUrl (design §16); every part given must hold." });
export type InboundSettings = z.infer<typeof inboundSettings>;

/** The inbound protection as the Endpoint shows it: its secrets only as set or not. */
export const inboundView = z
  .object({
    basicAuth: z.object({ username: z.string(), passwordSet: z.boolean() }).optional(),
    headerToken: z.object({ name: z.string(), valueSet: z.boolean() }).optional(),
    allowIps: z.array(z.string()).optional(),
    methods: z.array(z.string()).optional(),
  })
  .meta({ ...extension, description: "Who may send to the webhookUrl; absent: anyone." });
export type InboundViewJson = z.infer<typeof inboundView>;

/** The protection with its secrets: what is sealed at rest and what ingest checks with. */
export interface InboundSecrets {
  basicAuth?: { username: string; password: string } | undefined;
  headerToken?: { name: string; value: string } | undefined;
  allowIps?: string[] | undefined;
  methods?: string[] | undefined;
}

/** What the catalog keeps in clear (inbound_json): the settings without their secrets. */
export function inboundViewOf(settings: InboundSecrets): InboundViewJson {
  return {
    ...(settings.basicAuth ? { basicAuth: { username: settings.basicAuth.username, passwordSet: true } } : {}),
    ...(settings.headerToken ? { headerToken: { name: settings.headerToken.name, valueSet: true } } : {}),
    ...(settings.allowIps ? { allowIps: settings.allowIps } : {}),
    ...(settings.methods ? { methods: settings.methods } : {}),
  };
}
