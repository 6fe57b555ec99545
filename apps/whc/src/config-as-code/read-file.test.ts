import { describe, it, expect, afterAll } from "vitest";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "@whc/testing";
import { readConfigFile } from "./read-file.js";

/** How `whc apply -f` names what is wrong with a file: path, line and column, the field's dotted path, why. */

const dir = tempDir("whc-config-file-");
afterAll(() => dir.remove());

async function problem(name: string, text: string): Promise<string> {
  const file = path.join(dir.path, name);
  writeFileSync(file, text);
  try {
    await readConfigFile(file);
  } catch (err) {
    return (err as Error).message.replace(`${dir.path}${path.sep}`, "");
  }
  throw new Error(`${name} was accepted`);
}

describe("readConfigFile", () => {
  it("reads a file, filling the destination defaults", async () => {
    const file = path.join(dir.path, "good.yaml");
    writeFileSync(file, "endpoints:\n  - slug: a\n    operatingMode: relay\n    forward: { url: 'https://example.com/h' }\n");
    expect(await readConfigFile(file)).toEqual({
      endpoints: [{ slug: "a", operatingMode: "relay", forward: { url: "https://example.com/h", keepPath: true, timeoutMs: 10_000, maxAttempts: 6 } }],
      alertChannels: [],
    });
  });

  it.each([
    ["type.yaml", "endpoints:\n  - slug: a\n    forward:\n      url: http://127.0.0.1:9/\n      timeoutMs: fast\n", /^type\.yaml:5:18: endpoints\.0\.forward\.timeoutMs: .*expected number.* \(type\)$/],
    ["syntax.yaml", "endpoints:\n  - slug: a\n   oops: [\n", /^syntax\.yaml:3:1: not valid YAML: Sequence item without - indicator$/],
    ["keys.yaml", "endpoints: []\nendpoints: []\n", /^keys\.yaml:2:1: not valid YAML: Map keys must be unique$/],
    ["unknown.yaml", "endpoints:\n  - slug: a\n    colour: blue\n", /^unknown\.yaml:3:13: endpoints\.0\.colour: .* \(unknown\)$/],
    ["top.yaml", "endpoint:\n  - slug: a\n", /^top\.yaml:2:3: endpoint: .* \(unknown\)$/],
    ["slug.yaml", "endpoints:\n  - slug: Not A Slug\n", /^slug\.yaml:2:11: endpoints\.0\.slug: .* \(pattern\)$/],
    ["twice.yaml", "endpoints:\n  - slug: a\n  - slug: a\n", /^twice\.yaml:3:11: endpoints\.1\.slug: slug a is given more than once/],
    ["provider.yaml", "endpoints:\n  - slug: a\n    provider: stripey\n", /^provider\.yaml:3:15: endpoints\.0\.provider: unknown provider "stripey" \(generic, stripe, /],
    ["relay.yaml", "endpoints:\n  - slug: a\n    operatingMode: relay\n", /^relay\.yaml:2:5: endpoints\.0\.forward: operatingMode relay and proxy need forward settings \(required\)$/],
    ["variable.yaml", "endpoints:\n  - slug: a\n    secretFromEnv: 'not a name'\n", /^variable\.yaml:3:20: endpoints\.0\.secretFromEnv: .* \(pattern\)$/],
    ["response.yaml", "endpoints:\n  - slug: a\n    response: { status: 99 }\n", /^response\.yaml:3:25: endpoints\.0\.response\.status: .* \(range\)$/],
    ["channel.yaml", "alertChannels:\n  - { name: ops, type: email, url: 'x', events: [test] }\n", /^channel\.yaml:2:24: alertChannels\.0\.type: .* \(format\)$/],
    ["empty.yaml", "", /^empty\.yaml: the file is empty \(write "endpoints: \[\]" to mean no endpoints\)$/],
    ["list.yaml", "- slug: a\n", /^list\.yaml:1:1: \(the whole file\): .* \(type\)$/],
  ])("names what is wrong with %s", async (name, text, said) => {
    expect(await problem(name, text)).toMatch(said);
  });

  it("names a file it cannot read", async () => {
    await expect(readConfigFile(path.join(dir.path, "absent.yaml"))).rejects.toThrow(/^cannot read .*absent\.yaml: ENOENT/);
  });
});
