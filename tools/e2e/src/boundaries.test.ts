import { describe, it, expect, beforeAll } from "vitest";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { ESLint } from "eslint";
import { WORKSPACE_ROOT } from "@whc/testing";

/**
 * The module boundaries are a lint rule; these cases prove the rule is on and reads the tags,
 * by linting sources that are never written to disk as if they sat in the named files.
 */
const NX_ENV = {
  ...process.env,
  NX_DAEMON: "false",
  NX_NO_CLOUD: "true",
  NX_CACHE_DIRECTORY: path.join(WORKSPACE_ROOT, ".nx/cache"),
  NX_WORKSPACE_DATA_DIRECTORY: path.join(WORKSPACE_ROOT, ".nx/workspace-data"),
};

let eslint: ESLint;
beforeAll(() => {
  // The rule reads nx's project graph; `npm run lint` computes it the same way first.
  execFileSync(path.join(WORKSPACE_ROOT, "node_modules/.bin/nx"), ["show", "projects"], { cwd: WORKSPACE_ROOT, env: NX_ENV, stdio: "ignore" });
  Object.assign(process.env, { NX_WORKSPACE_DATA_DIRECTORY: NX_ENV.NX_WORKSPACE_DATA_DIRECTORY, NX_DAEMON: "false" });
  eslint = new ESLint({ cwd: WORKSPACE_ROOT });
}, 120_000);

async function boundaryErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(WORKSPACE_ROOT, file) });
  return result!.messages.map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`);
}

describe("module boundaries", () => {
  it("refuse a domain lib importing an adapter", async () => {
    const errors = await boundaryErrors("libs/gateway-core/src/probe.ts", 'import { openSqliteStore } from "@whc/catalog-sqlite";\nexport const x = openSqliteStore;\n');
    expect(errors.join("\n")).toMatch(/enforce-module-boundaries: .*type:domain.*can only depend on/);
  });

  it("refuse one service's lib importing another service's", async () => {
    const errors = await boundaryErrors("libs/ingest-core/src/probe.ts", 'import { createCryptoService } from "@whc/crypto-core";\nexport const x = createCryptoService;\n');
    expect(errors.join("\n")).toMatch(/enforce-module-boundaries: .*scope:ingest.*can only depend on/);
  });

  it("refuse production code importing the testing lib", async () => {
    const errors = await boundaryErrors("libs/composition/src/probe.ts", 'import { freePort } from "@whc/testing";\nexport const x = freePort;\n');
    expect(errors.join("\n")).toMatch(/enforce-module-boundaries/);
  });

  it("refuse Node imports in the browser-safe api-model", async () => {
    const errors = await boundaryErrors("libs/api-model/src/probe.ts", 'import { createHash } from "node:crypto";\nexport const x = createHash;\n');
    expect(errors.join("\n")).toMatch(/no-restricted-imports/);
  });

  it("accept what the layout allows: a domain lib importing a shared domain lib and a util", async () => {
    const errors = await boundaryErrors(
      "libs/gateway-core/src/probe.ts",
      'import { PROVIDER_NAMES } from "@whc/signatures";\nimport { AppError } from "@whc/errors";\nexport const x = [PROVIDER_NAMES, AppError];\n',
    );
    expect(errors).toEqual([]);
  });
});
