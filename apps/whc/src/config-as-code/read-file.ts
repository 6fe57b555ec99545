import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { isNode, LineCounter, parseDocument, type Document } from "yaml";
import { checkShape, CONFIG_FILE_LIMITS, configFile, type ConfigFile } from "@whc/api-model";
import { PROVIDER_NAMES } from "@whc/signatures";
import { CliError } from "../exit-codes.js";
import { oneOf } from "../output.js";

/** What a file given to `whc apply -f` is called in messages: its path, or `stdin` for `-`. */
export const fileLabel = (file: string) => (file === "-" ? "stdin" : file);

async function readStdin(limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new CliError(`stdin: more than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readText(file: string): Promise<string> {
  const limit = CONFIG_FILE_LIMITS.bytes;
  if (file === "-") return readStdin(limit);
  try {
    if ((await stat(file)).size > limit) throw new CliError(`${file}: more than ${limit} bytes`);
    return await readFile(file, "utf8");
  } catch (err) {
    if (CliError.is(err)) throw err;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** `file:line:col` of the value at a dotted path, or of the nearest enclosing one that exists. */
function placeOf(doc: Document, lines: LineCounter, label: string, field: string): string {
  const path = field === "" ? [] : field.split(".").map((k) => (/^\d+$/.test(k) ? Number(k) : k));
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) {
      const { line, col } = lines.linePos(node.range[0]);
      return `${label}:${line}:${col}`;
    }
  }
  return label;
}

/** A provider the deployment does not know would pass the file's shape and fail at the API: caught here. */
function checkProviders(file: ConfigFile, place: (field: string) => string): void {
  file.endpoints.forEach((e, i) => {
    if (e.provider !== undefined && !(PROVIDER_NAMES as readonly string[]).includes(e.provider)) {
      const field = `endpoints.${i}.provider`;
      throw new CliError(`${place(field)}: ${field}: unknown provider "${e.provider}" (${oneOf(PROVIDER_NAMES)})`);
    }
  });
}

/**
 * Reads and checks the file of `whc apply` (YAML, or JSON, which is YAML): every problem is
 * named by the file, line and column, and the field's dotted path, before anything is sent.
 */
export async function readConfigFile(file: string): Promise<ConfigFile> {
  return (await readConfigSource(file)).config;
}

/** The file checked, and the SHA-256 of its text as read (the audit log's config.applied names it). */
export async function readConfigSource(file: string): Promise<{ config: ConfigFile; sha256: string }> {
  const text = await readText(file);
  return { config: parseConfigText(file, text), sha256: createHash("sha256").update(text).digest("hex") };
}

function parseConfigText(file: string, text: string): ConfigFile {
  const label = fileLabel(file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const at = syntax.linePos?.[0];
    // The message's first line, without the position it ends with (it leads the line here).
    const what = (syntax.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:$/, "");
    throw new CliError(`${label}${at ? `:${at.line}:${at.col}` : ""}: not valid YAML: ${what}`);
  }
  const input: unknown = doc.toJS();
  // An empty file would mean "no endpoints", which --prune would act on: say so instead.
  if (input === null || input === undefined) throw new CliError(`${label}: the file is empty (write "endpoints: []" to mean no endpoints)`);
  const place = (field: string) => placeOf(doc, lines, label, field);
  const checked = checkShape(configFile, input);
  if (!checked.ok) {
    const { field, reason, message } = checked.problem;
    throw new CliError(`${place(field)}: ${field || "(the whole file)"}: ${message} (${reason})`);
  }
  checkProviders(checked.value, place);
  return checked.value;
}
