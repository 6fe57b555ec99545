import type { z } from "zod";

/** One environment variable: its name, its default, and how its text becomes a value. */
export interface Setting<T> {
  readonly name: string;
  readonly description: string;
  /** The default as it would be written in the environment; undefined: none, the value may be absent. */
  readonly defaultText: string | undefined;
  /** `env`: the whole environment, read by a default that follows another variable. */
  parse(raw: string | undefined, env?: NodeJS.ProcessEnv): T;
}

/** A setting's value: always present when it has a default, possibly undefined when it has none. */
export type WithDefault<D extends string | undefined, T> = [D] extends [string] ? T : T | undefined;

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

/** How the text of one kind of setting becomes its value. */
export interface SettingKind<T> {
  /** Gets the trimmed text; never undefined. */
  readonly schema: z.ZodType<T, string>;
  /** Completes "must be ...", in the one-line message of a bad value. */
  readonly expectation: string;
  /** Keys and credentials: a bad value is described by its length, never repeated into logs. */
  readonly secret?: boolean;
  /**
   * A blank value counts as unset (so `X: ${X:-}` in compose files means "not set") unless
   * the kind refuses it.
   */
  readonly blankRefused?: boolean;
}

export interface SettingOptions {
  /**
   * The default when it follows other variables (`http://localhost:<WHC_INGEST_PORT>`);
   * `defaultText` then says so in words, for the README.
   */
  defaultFrom?: (env: NodeJS.ProcessEnv) => string;
}

export function defineSetting<T, const D extends string | undefined>(
  name: string,
  description: string,
  defaultText: D,
  kind: SettingKind<T>,
  options: SettingOptions = {},
): Setting<WithDefault<D, T>> {
  return {
    name,
    description,
    defaultText,
    parse(raw, env = {}) {
      const given = raw?.trim();
      const unset = given === undefined || (given === "" && !kind.blankRefused);
      const text = unset ? (options.defaultFrom ? options.defaultFrom(env) : defaultText) : given;
      if (text === undefined) return undefined as WithDefault<D, T>;
      const result = kind.schema.safeParse(text);
      if (!result.success) {
        const got = kind.secret ? `a value of ${raw?.length ?? 0} characters` : JSON.stringify(raw ?? "");
        throw new ConfigError(name, `must be ${kind.expectation}, got ${got}`);
      }
      return result.data as WithDefault<D, T>;
    },
  };
}

export type SettingsSpec = Record<string, Setting<unknown>>;
export type ConfigOf<S extends SettingsSpec> = { readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** Reads and validates every setting of `spec` from `env` once; throws ConfigError on the first bad one. */
export function loadConfig<S extends SettingsSpec>(spec: S, env: NodeJS.ProcessEnv): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec)) out[key] = s.parse(env[s.name], env);
  return out as ConfigOf<S>;
}
