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
    ["relay.yaml", "endpoints:\n  - slug: a\n    operatingMode: relay\n", /^relay\.yaml:2:5: endpoints\.0\.forward: operatingMode relay and proxy need forward settings or destinations \(required\)$/],
    [
      "both.yaml",
      "endpoints:\n  - slug: a\n    operatingMode: relay\n    forward: { url: 'https://a.example' }\n    destinations:\n      - { name: b, url: 'https://b.example' }\n",
      /^both\.yaml:6:7: endpoints\.0\.destinations: give forward or destinations, not both \(unsupported\)$/,
    ],
    [
      "names.yaml",
      "endpoints:\n  - slug: a\n    operatingMode: relay\n    destinations:\n      - { name: b, url: 'https://b.example' }\n      - { name: b, url: 'https://c.example' }\n",
      /^names\.yaml:6:17: endpoints\.0\.destinations\.1\.name: destination b is given more than once \(duplicate\)$/,
    ],
    [
      "operator.yaml",
      "endpoints:\n  - slug: a\n    operatingMode: relay\n    destinations:\n      - name: b\n        url: 'https://b.example'\n        filter: { body.total: { $where: 'true' } }\n",
      /^operator\.yaml:7:\d+: endpoints\.0\.destinations\.0\.filter\.body\.total\.\$where: .* \(unsupported_operator\)$/,
    ],
    [
      "proxy.yaml",
      "endpoints:\n  - slug: a\n    operatingMode: proxy\n    destinations:\n      - { name: b, url: 'https://b.example', filter: { method: POST } }\n",
      /^proxy\.yaml:5:\d+: endpoints\.0\.destinations\.0\.filter: a proxy endpoint forwards every capture: it takes no filter \(unsupported\)$/,
    ],
    [
      "limit.yaml",
      "endpoints:\n  - slug: a\n    destinations:\n      - { name: b, url: 'https://b.example', rateLimit: { perSecond: 5, perMinute: 10 } }\n",
      /^limit\.yaml:4:\d+: endpoints\.0\.destinations\.0\.rateLimit\.perMinute: give perSecond or perMinute, not both \(format\)$/,
    ],
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
