import { z } from "zod";

/** One environment variable: its name, its default, and how its text becomes a value. */
export interface Setting<T> {
  readonly name: string;
  readonly description: string;
  readonly defaultText: string | undefined;
  parse(raw: string | undefined): T;
}

const brand = Symbol.for("webhook-capture.ConfigError");

/** A bad variable: start-up stops with `message`, one line naming the variable. */
export class ConfigError extends Error {
  readonly [brand] = true;
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`configuration error: ${variable} ${problem}`);
    this.name = "ConfigError";
    this.variable = variable;
  }
  static is(value: unknown): value is ConfigError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

function setting<T>(
  name: string,
  description: string,
  schema: z.ZodType<T>,
  defaultText: string | undefined,
  expectation: string,
): Setting<T> {
  return {
    name,
    description,
    defaultText,
    parse(raw) {
      const text = raw === undefined || raw.trim() === "" ? defaultText : raw.trim();
      const result = schema.safeParse(text);
      if (!result.success) {
        throw new ConfigError(name, `must be ${expectation}, got ${JSON.stringify(raw ?? "")}`);
      }
      return result.data;
    },
  };
}

export function intSetting(name: string, description: string, fallback: number, min: number, max: number) {
  const schema = z.string().regex(/^-?\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
  return setting(name, description, schema, String(fallback), `an integer from ${min} to ${max}`);
}

export function portSetting(name: string, description: string, fallback: number) {
  return intSetting(name, description, fallback, 0, 65535);
}

export function boolSetting(name: string, description: string, fallback: boolean) {
  const schema = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v));
  return setting(name, description, schema, String(fallback), "true or false");
}

export function stringSetting(name: string, description: string, fallback: string) {
  return setting(name, description, z.string(), fallback, "a string");
}

export function optionalStringSetting(name: string, description: string) {
  return setting(name, description, z.string().optional(), undefined, "a string");
}

export function urlSetting(name: string, description: string, fallback: string | undefined, protocols: string[]) {
  const schema = z
    .string()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    })
    .transform((v) => v.replace(/\/+$/, ""))
    .optional();
  return setting(name, description, schema, fallback, `a URL (${protocols.join(" or ")})`);
}

export function enumSetting<const T extends readonly [string, ...string[]]>(
  name: string,
  description: string,
  values: T,
  fallback: T[number],
) {
  return setting(name, description, z.enum(values), fallback, `one of ${values.join(", ")}`);
}

/** `a:1,b:2` pairs; used for key rings and bootstrap keys. */
export function pairListSetting(name: string, description: string, valuePattern: RegExp, expectation: string) {
  const pair = z.string().regex(new RegExp(`^[A-Za-z0-9._-]{1,64}:${valuePattern.source}$`));
  const schema = z
    .string()
    .optional()
    .transform((v) => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : []))
    .pipe(z.array(pair))
    .transform((items) =>
      items.map((item) => {
        const at = item.indexOf(":");
        return { name: item.slice(0, at), value: item.slice(at + 1) };
      }),
    );
  return setting(name, description, schema, undefined, `a comma-separated list of name:${expectation}`);
}

export type SettingsSpec = Record<string, Setting<unknown>>;
export type ConfigOf<S extends SettingsSpec> = { readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** Reads and validates every setting of `spec` from `env` once; throws ConfigError on the first bad one. */
export function loadConfig<S extends SettingsSpec>(spec: S, env: NodeJS.ProcessEnv): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec)) out[key] = s.parse(env[s.name]);
  return out as ConfigOf<S>;
}
