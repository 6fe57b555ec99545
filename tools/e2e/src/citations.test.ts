import { describe, it, expect } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { WORKSPACE_ROOT } from "@whc/testing";

/**
 * Every citation in the code and docs leads somewhere: `design §N` (in any spelling below) to a
 * `## N.` heading of docs/design.md, `ADR NNNN` and `adr/NNNN-....md` to a record in docs/adr/,
 * and a relative markdown link to a file (and heading) that exists. The first reference a
 * newcomer follows must not lead nowhere, as `design §9-§13` once did.
 */

const DESIGN = "docs/design.md";
const ADR_DIR = "docs/adr";
const SCANNED = /\.(ts|mjs|js|proto|md|yml|yaml)$/;
const SKIPPED_DIR = /(^|\/)(node_modules|dist|gen)\//;

/**
 * `design §9`, `design.md §3`, `DESIGN.md §6`, `DESIGN §4`, `Design §11`, `[design.md](design.md) §3`,
 * with more sections after it: `§9-§13` (a range), `§9, §10`, `§5 and §13`.
 */
const DESIGN_CITATION = /\b(?:design|DESIGN|Design)(?:\.md)?(?:\]\([^)\s]*\))?[ \t]?§[ \t]?(\d+)((?:[ \t]*(?:-|–|,|and|or|to)[ \t]*§[ \t]?\d+)*)/g;
/** A bare `§N` (docs only, where it always means design.md), or a dotted one such as an RFC's. */
const BARE_SECTION = /§[ \t]?(\d+(?:\.\d+)*)/g;
/** What precedes an RFC's section: `RFC 9110 §7.6.1`, `RFC 9110 §15.3.5, §15.4.5`. */
const RFC_BEFORE = /RFC[ \t]?\d+[ \t]*(?:§[ \t]?[\d.]+[ \t]*(?:,|and)?[ \t]*)*$/;
/** `ADR 0008`, `ADR 0002, 0008`, `ADRs 0005/0006`. */
const ADR_CITATION = /\bADRs?[ \t]+(\d{4})((?:[ \t]*(?:,|and|\/|-|–)[ \t]*\d{4})*)/g;
const ADR_PATH = /\badr\/(\d{4}-[A-Za-z0-9._-]+?\.md)\b/g;
const MARKDOWN_LINK = /\[[^\]\n]*\]\(([^)\s]+)(?:[ \t]+"[^"]*")?\)/g;

/** The sections a design citation names: `§9-§11` is 9, 10 and 11. */
function designSections(citation: RegExpExecArray): number[] {
  const sections = [Number(citation[1])];
  for (const [, separator, n] of (citation[2] ?? "").matchAll(/[ \t]*(-|–|,|and|or|to)[ \t]*§[ \t]?(\d+)/g)) {
    const to = Number(n);
    const from = sections[sections.length - 1] as number;
    if (["-", "–", "to"].includes(separator as string) && to > from) for (let k = from + 1; k < to; k += 1) sections.push(k);
    sections.push(to);
  }
  return sections;
}

/** Heading anchors as GitHub makes them: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, title] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = (title as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Fenced code blocks blanked (lines kept, so line numbers stay right). */
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, " "));
}

function trackedFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "-z"], { cwd: WORKSPACE_ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return listed
    .split("\0")
    .filter((f) => SCANNED.test(f) && !SKIPPED_DIR.test(f) && existsSync(path.join(WORKSPACE_ROOT, f)));
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

interface Problem {
  at: string;
  cites: string;
  why: string;
}

function designHeadings(): Set<number> {
  const text = readFileSync(path.join(WORKSPACE_ROOT, DESIGN), "utf8");
  return new Set([...text.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
}

function adrNumbers(): Set<string> {
  return new Set(readdirSync(path.join(WORKSPACE_ROOT, ADR_DIR)).flatMap((f) => /^(\d{4})-.+\.md$/.exec(f)?.[1] ?? []));
}

/** Every citation of one file that leads nowhere. */
function problemsIn(file: string, text: string, sections: Set<number>, adrs: Set<string>): Problem[] {
  const problems: Problem[] = [];
  const report = (index: number, cites: string, why: string) => problems.push({ at: `${file}:${lineOf(text, index)}`, cites, why });
  const isDoc = /^docs\/(adr\/)?[^/]+\.md$/.test(file);

  const cited: [number, number][] = [];
  for (const m of text.matchAll(DESIGN_CITATION)) {
    cited.push([m.index, m.index + m[0].length]);
    for (const n of designSections(m)) if (!sections.has(n)) report(m.index, m[0], `${DESIGN} has no "## ${n}." heading`);
  }
  if (isDoc) {
    for (const m of text.matchAll(BARE_SECTION)) {
      if (cited.some(([from, to]) => m.index >= from && m.index < to)) continue;
      if (RFC_BEFORE.test(text.slice(Math.max(0, m.index - 80), m.index))) continue;
      const n = m[1] as string;
      if (!/^\d+$/.test(n) || !sections.has(Number(n))) report(m.index, m[0], `${DESIGN} has no "## ${n}." heading`);
    }
  }
  for (const m of text.matchAll(ADR_CITATION)) {
    for (const n of [m[1] as string, ...((m[2] ?? "").match(/\d{4}/g) ?? [])]) {
      if (!adrs.has(n)) report(m.index, m[0], `no ${ADR_DIR}/${n}-*.md`);
    }
  }
  for (const m of text.matchAll(ADR_PATH)) {
    if (!existsSync(path.join(WORKSPACE_ROOT, ADR_DIR, m[1] as string))) report(m.index, m[0], `no ${ADR_DIR}/${m[1]}`);
  }
  if (file.endsWith(".md")) problems.push(...linkProblems(file, text));
  return problems;
}

/** Relative links of a markdown file: the file (or folder) must exist, and an anchor must be one of its headings. */
function linkProblems(file: string, text: string): Problem[] {
  const problems: Problem[] = [];
  const prose = withoutCodeBlocks(text);
  for (const m of prose.matchAll(MARKDOWN_LINK)) {
    const target = m[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = pathPart === "" ? path.join(WORKSPACE_ROOT, file) : path.resolve(WORKSPACE_ROOT, path.dirname(file), pathPart.split("?")[0] as string);
    const at = `${file}:${lineOf(text, m.index)}`;
    if (!existsSync(resolved)) {
      problems.push({ at, cites: m[0], why: `${path.relative(WORKSPACE_ROOT, resolved)} does not exist` });
    } else if (anchor && statSync(resolved).isFile() && resolved.endsWith(".md") && !anchorsOf(readFileSync(resolved, "utf8")).has(anchor)) {
      problems.push({ at, cites: m[0], why: `${path.relative(WORKSPACE_ROOT, resolved)} has no heading #${anchor}` });
    }
  }
  return problems;
}

describe("citations in code and docs", () => {
  it("reads every spelling of a design citation, ranges and lists included, and tells RFC sections apart", () => {
    const sectionsOf = (text: string) => [...text.matchAll(DESIGN_CITATION)].flatMap(designSections);
    expect(sectionsOf("design §9-§13 and design.md §4 and ADR 0004")).toEqual([9, 10, 11, 12, 13, 4]);
    expect(sectionsOf("DESIGN.md §6, DESIGN §4, Design §11, design §9, §10, design §5 and §13")).toEqual([6, 4, 11, 9, 10, 5, 13]);
    expect(sectionsOf("[design.md](design.md) §3 fixes most gaps; design §12, and more")).toEqual([3, 12]);
    expect(sectionsOf("RFC 9110 §7.6.1")).toEqual([]);
    expect(RFC_BEFORE.test("(RFC 9110 §15.3.5, ")).toBe(true);
    expect(RFC_BEFORE.test("the design, ")).toBe(false);
    // Spelled in pieces, so that this file's own scan does not find them.
    const [section, adr] = ["§" + "99", "ADR " + "9999"];
    const problems = problemsIn("docs/x.md", `design ${section}; as in §98; RFC 9110 §7.6.1; ${adr}; [a](nowhere.md)`, new Set([1]), new Set(["0001"]));
    expect(problems.map((p) => p.cites)).toEqual([`design ${section}`, "§98", adr, "[a](nowhere.md)"]);
  });

  it("lead to a section of docs/design.md, an ADR, or a file and heading that exist", () => {
    const sections = designHeadings();
    const adrs = adrNumbers();
    const files = trackedFiles();
    let cited = 0;
    const problems: Problem[] = [];
    for (const file of files) {
      const text = readFileSync(path.join(WORKSPACE_ROOT, file), "utf8");
      cited += [...text.matchAll(DESIGN_CITATION)].length + [...text.matchAll(ADR_CITATION)].length;
      problems.push(...problemsIn(file, text, sections, adrs));
    }
    // The scan found what it was meant to find (the repository cites the design and its ADRs often).
    expect(files).toContain(DESIGN);
    expect(cited).toBeGreaterThan(100);
    expect(problems.map((p) => `${p.at}: ${p.cites} -> ${p.why}`)).toEqual([]);
  });
});
