import { type Command, InvalidArgumentError, Option } from "commander";
import type { EndpointJson, InboundSettings, InboundViewJson } from "@whc/api-model";

/** The command-line flags of an endpoint's inbound protection (design §16). */
export interface InboundFlags {
  basicAuth?: string;
  headerToken?: string;
  allowIp?: string[];
  method?: string[];
  /** false for `--no-inbound` (update only). */
  inbound?: false;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The inbound flags create and update take. */
export function withInboundOptions(command: Command): Command {
  return command
    .option("--basic-auth <user:password>", "senders must present these HTTP Basic credentials (401 otherwise); on update `user` alone keeps the password")
    .option("--header-token <name:value>", "senders must send this header with this value (401 otherwise); on update `name` alone keeps the value")
    .option("--allow-ip <address|cidr>", "accept senders only from this address or range (403 otherwise); repeat for more", collect)
    .addOption(
      new Option("--method <method>", "accept only this method (405 otherwise); repeat for more").argParser((value: string, previous: string[] = []) => {
        if (!/^[A-Za-z][A-Za-z0-9_-]{0,19}$/.test(value)) throw new InvalidArgumentError("an HTTP method such as POST");
        return [...previous, value.toUpperCase()];
      }),
    );
}

/** `a:b` as [a, b]; `a` alone as [a, undefined] (the stored secret is kept). */
function pair(text: string, flag: string): [string, string | undefined] {
  const at = text.indexOf(":");
  if (at === 0) throw new Error(`${flag}: the part before ':' is missing`);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function given(opts: InboundFlags): boolean {
  return [opts.basicAuth, opts.headerToken, opts.allowIp, opts.method].some((v) => v !== undefined);
}

/**
 * The `inbound` object from the flags, on top of what the endpoint has (`current`, on update):
 * a part not given keeps its settings, its secret kept by the server. Undefined: no flag given.
 */
export function inboundOf(opts: InboundFlags, current?: InboundViewJson): InboundSettings | null | undefined {
  if (opts.inbound === false) {
    if (given(opts)) throw new Error("--no-inbound removes the protection: give it alone");
    return null;
  }
  if (!given(opts)) return undefined;
  const [user, password] = opts.basicAuth !== undefined ? pair(opts.basicAuth, "--basic-auth") : [];
  const [name, value] = opts.headerToken !== undefined ? pair(opts.headerToken, "--header-token") : [];
  const basicAuth = user !== undefined ? { username: user, ...(password !== undefined ? { password } : {}) } : current?.basicAuth && { username: current.basicAuth.username };
  const headerToken = name !== undefined ? { name, ...(value !== undefined ? { value } : {}) } : current?.headerToken && { name: current.headerToken.name };
  const allowIps = opts.allowIp ?? current?.allowIps;
  const methods = opts.method ?? current?.methods;
  return {
    ...(basicAuth ? { basicAuth } : {}),
    ...(headerToken ? { headerToken } : {}),
    ...(allowIps ? { allowIps } : {}),
    ...(methods ? { methods } : {}),
  };
}

/** One line of what protects the endpoint, for `endpoints get` and update answers. */
export function inboundText(e: Pick<EndpointJson, "inbound" | "rejectedCount">): string {
  const i = e.inbound;
  if (!i) return "anyone may send";
  const parts = [
    i.basicAuth ? `basic auth as ${i.basicAuth.username}` : "",
    i.headerToken ? `header ${i.headerToken.name}` : "",
    i.allowIps ? `from ${i.allowIps.join(", ")}` : "",
    i.methods ? `methods ${i.methods.join(", ")}` : "",
  ].filter(Boolean);
  return `${parts.join("; ")} (${e.rejectedCount} refused)`;
}
