// Local nx plugin: every project (a folder with a project.json) has `lint` and `typecheck`, and
// `test` when it has a vitest.config.ts, so `nx affected -t lint typecheck test` covers each project
// without a line in its project.json. What the targets run, and what they depend on, is in nx.json
// `targetDefaults`.
import { existsSync } from "node:fs";
import path from "node:path";

export const name = "whc-project-checks";

/** @type {import("nx/src/project-graph/plugins").CreateNodesV2} */
export const createNodesV2 = [
  "**/project.json",
  (projectFiles, _options, context) =>
    projectFiles.map((file) => {
      const root = path.dirname(file);
      const targets = { lint: {}, typecheck: {} };
      if (existsSync(path.join(context.workspaceRoot, root, "vitest.config.ts"))) targets.test = {};
      return [file, { projects: { [root]: { targets } } }];
    }),
];
