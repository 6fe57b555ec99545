#!/usr/bin/env node
// `nx run <project>:typecheck`: type-checks one project's own files and reports errors in them only.
//
// A project with its own tsconfig.json (the dashboard: DOM types, bundler resolution) is checked
// with it; every other project with the root tsconfig.json narrowed to the files under its folder.
// The libraries it imports resolve to their sources (tsconfig.base.json paths) and are read for
// their types, but their errors belong to their own typecheck: `nx affected` runs that one too,
// and each file is checked once, which keeps 30-odd runs from checking the whole repository each.
//
// `npm run typecheck` stays the one whole-repository pass (.ci/run uses it: faster than a run per
// project, and it also covers files no project owns, such as tools/bench).
import { existsSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const projectRoot = process.argv[2];
if (!projectRoot) {
  console.error("usage: node tools/typecheck-project.mjs <project root>");
  process.exit(2);
}

const workspace = process.cwd();
const own = path.join(projectRoot, "tsconfig.json");
const configFile = existsSync(own) ? own : "tsconfig.json";
const reportHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => workspace,
  getNewLine: () => "\n",
};

const parsed = ts.getParsedCommandLineOfConfigFile(configFile, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    console.error(ts.formatDiagnostic(d, reportHost));
    process.exit(2);
  },
});
const inProject = (file) => !path.relative(path.resolve(projectRoot), path.resolve(file)).startsWith("..");
const files = parsed.fileNames.filter(inProject);
const program = ts.createProgram({ rootNames: files, options: parsed.options, projectReferences: parsed.projectReferences });

const diagnostics = [
  ...parsed.errors,
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...files.flatMap((file) => {
    const source = program.getSourceFile(file);
    return source ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)] : [];
  }),
];
if (diagnostics.length > 0) {
  console.error(ts.formatDiagnostics(diagnostics, reportHost));
  process.exit(1);
}
console.log(`${projectRoot}: ${files.length} files type-check (${path.basename(configFile)})`);
