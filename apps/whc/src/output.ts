import ora from "ora";

export interface Output {
  json: boolean;
  /** A result: JSON for scripts, the human rendering otherwise. */
  result(value: unknown, human: () => string): void;
  /** Runs `work` under a spinner when a person is watching. */
  busy<T>(label: string, work: () => Promise<T>): Promise<T>;
}

export function createOutput(json: boolean): Output {
  const interactive = !json && process.stderr.isTTY === true;
  return {
    json,
    result(value, human) {
      process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
    },
    async busy(label, work) {
      if (!interactive) return work();
      const spinner = ora({ text: label, stream: process.stderr }).start();
      try {
        const value = await work();
        spinner.stop();
        return value;
      } catch (err) {
        spinner.stop();
        throw err;
      }
    },
  };
}

export function table(rows: string[][]): string {
  if (rows.length === 0) return "";
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

/** `a, b or c`: the choices of an option, for its help. */
export function oneOf(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}
