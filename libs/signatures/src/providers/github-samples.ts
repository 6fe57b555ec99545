import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

/** What GitHub sends with every delivery (docs.github.com, "Webhook events and payloads"). */
function delivery(ctx: SampleContext, event: string, payload: JsonValue) {
  return jsonRequest(
    [
      ["User-Agent", `GitHub-Hookshot/${ctx.id("", 7, "hex")}`],
      ["X-GitHub-Event", event],
      ["X-GitHub-Delivery", ctx.uuid()],
      ["X-GitHub-Hook-ID", String(ctx.int(100_000_000, 999_999_999))],
      ["X-GitHub-Hook-Installation-Target-ID", "1296269"],
      ["X-GitHub-Hook-Installation-Target-Type", "repository"],
    ],
    payload,
  );
}

const user = (login: string, id: number) => ({
  login,
  id,
  node_id: `MDQ6VXNlcj${id}`,
  avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
  html_url: `https://github.com/${login}`,
  type: "User",
  site_admin: false,
});

const OWNER = user("octocat", 583231);
const SENDER = user("monalisa", 2);

const repository = {
  id: 1296269,
  node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
  name: "hello-world",
  full_name: "octocat/hello-world",
  private: false,
  owner: OWNER,
  html_url: "https://github.com/octocat/hello-world",
  default_branch: "main",
  visibility: "public",
};

export const githubSamples: ProviderSamples = {
  samples: [
    {
      eventType: "push",
      build: (ctx) => {
        const after = ctx.id("", 40, "hex");
        const commit = {
          id: after,
          tree_id: ctx.id("", 40, "hex"),
          distinct: true,
          message: "Fix the billing retry",
          timestamp: ctx.iso,
          url: `https://github.com/octocat/hello-world/commit/${after}`,
          author: { name: "Mona Lisa", email: "mona@example.com", username: "monalisa" },
          committer: { name: "Mona Lisa", email: "mona@example.com", username: "monalisa" },
          added: [],
          removed: [],
          modified: ["src/billing.ts"],
        };
        return delivery(ctx, "push", {
          ref: "refs/heads/main",
          before: ctx.id("", 40, "hex"),
          after,
          created: false,
          deleted: false,
          forced: false,
          compare: `https://github.com/octocat/hello-world/compare/${after.slice(0, 12)}`,
          commits: [commit],
          head_commit: commit,
          pusher: { name: "monalisa", email: "mona@example.com" },
          repository,
          sender: SENDER,
        });
      },
    },
    {
      eventType: "pull_request.opened",
      build: (ctx) => {
        const number = ctx.int(2, 999);
        return delivery(ctx, "pull_request", {
          action: "opened",
          number,
          pull_request: {
            id: ctx.int(1_000_000_000, 2_000_000_000),
            number,
            state: "open",
            title: "Retry failed invoices",
            body: "Retries an invoice three times before giving up.",
            user: SENDER,
            draft: false,
            created_at: ctx.iso,
            updated_at: ctx.iso,
            html_url: `https://github.com/octocat/hello-world/pull/${number}`,
            head: { ref: "billing-retry", sha: ctx.id("", 40, "hex"), label: "monalisa:billing-retry" },
            base: { ref: "main", sha: ctx.id("", 40, "hex"), label: "octocat:main" },
            merged: false,
            commits: 1,
            additions: 12,
            deletions: 3,
            changed_files: 1,
          },
          repository,
          sender: SENDER,
        });
      },
    },
    {
      eventType: "issues.opened",
      build: (ctx) => {
        const number = ctx.int(2, 999);
        return delivery(ctx, "issues", {
          action: "opened",
          issue: {
            id: ctx.int(1_000_000_000, 2_000_000_000),
            number,
            title: "Invoices are sent twice",
            body: "Since yesterday every customer receives two invoice emails.",
            state: "open",
            user: SENDER,
            labels: [{ id: 208045946, name: "bug", color: "d73a4a", default: true }],
            comments: 0,
            created_at: ctx.iso,
            updated_at: ctx.iso,
            html_url: `https://github.com/octocat/hello-world/issues/${number}`,
          },
          repository,
          sender: SENDER,
        });
      },
    },
    {
      eventType: "ping",
      build: (ctx) =>
        delivery(ctx, "ping", {
          zen: "Keep it logically awesome.",
          hook_id: ctx.int(100_000_000, 999_999_999),
          hook: { type: "Repository", active: true, events: ["push", "pull_request", "issues"], config: { content_type: "json", insecure_ssl: "0" } },
          repository,
          sender: SENDER,
        }),
    },
  ],
};
