import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

/** GitLab names the event in X-Gitlab-Event (docs.gitlab.com, "Webhook events"). */
function hook(ctx: SampleContext, event: string, payload: JsonValue) {
  return jsonRequest(
    [
      ["User-Agent", "GitLab/17.3.0"],
      ["X-Gitlab-Event", event],
      ["X-Gitlab-Instance", "https://gitlab.example.com"],
      ["X-Gitlab-Webhook-UUID", ctx.uuid()],
      ["X-Gitlab-Event-UUID", ctx.uuid()],
    ],
    payload,
  );
}

const user = { id: 1, name: "Administrator", username: "root", avatar_url: "https://www.gravatar.com/avatar/root", email: "admin@example.com" };
const project = {
  id: 15,
  name: "Diaspora",
  description: "Billing service",
  web_url: "https://gitlab.example.com/mike/diaspora",
  git_ssh_url: "git@gitlab.example.com:mike/diaspora.git",
  git_http_url: "https://gitlab.example.com/mike/diaspora.git",
  namespace: "Mike",
  visibility_level: 0,
  path_with_namespace: "mike/diaspora",
  default_branch: "main",
};
const time = (ctx: SampleContext) => ctx.iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");

export const gitlabSamples: ProviderSamples = {
  samples: [
    {
      eventType: "Push Hook",
      build: (ctx) => {
        const after = ctx.id("", 40, "hex");
        return hook(ctx, "Push Hook", {
          object_kind: "push",
          event_name: "push",
          before: ctx.id("", 40, "hex"),
          after,
          ref: "refs/heads/main",
          ref_protected: true,
          checkout_sha: after,
          user_id: user.id,
          user_name: user.name,
          user_username: user.username,
          user_email: user.email,
          project_id: project.id,
          project,
          commits: [
            {
              id: after,
              message: "Fix the billing retry\n",
              title: "Fix the billing retry",
              timestamp: ctx.iso,
              url: `${project.web_url}/-/commit/${after}`,
              author: { name: "Jordi Mallach", email: "jordi@example.com" },
              added: [],
              modified: ["app/billing.rb"],
              removed: [],
            },
          ],
          total_commits_count: 1,
          repository: { name: project.name, url: project.git_ssh_url, homepage: project.web_url, visibility_level: 0 },
        });
      },
    },
    {
      eventType: "Merge Request Hook",
      build: (ctx) => {
        const iid = ctx.int(2, 999);
        return hook(ctx, "Merge Request Hook", {
          object_kind: "merge_request",
          event_type: "merge_request",
          user,
          project,
          object_attributes: {
            id: ctx.int(10_000, 99_999),
            iid,
            title: "Retry failed invoices",
            description: "Retries an invoice three times before giving up.",
            state: "opened",
            action: "open",
            source_branch: "billing-retry",
            target_branch: "main",
            author_id: user.id,
            merge_status: "unchecked",
            created_at: time(ctx),
            updated_at: time(ctx),
            url: `${project.web_url}/-/merge_requests/${iid}`,
            last_commit: { id: ctx.id("", 40, "hex"), message: "Retry failed invoices", timestamp: ctx.iso },
          },
          labels: [],
          repository: { name: project.name, url: project.git_ssh_url, homepage: project.web_url },
        });
      },
    },
    {
      eventType: "Issue Hook",
      build: (ctx) => {
        const iid = ctx.int(2, 999);
        return hook(ctx, "Issue Hook", {
          object_kind: "issue",
          event_type: "issue",
          user,
          project,
          object_attributes: {
            id: ctx.int(10_000, 99_999),
            iid,
            title: "Invoices are sent twice",
            description: "Since yesterday every customer receives two invoice emails.",
            state: "opened",
            action: "open",
            author_id: user.id,
            created_at: time(ctx),
            updated_at: time(ctx),
            url: `${project.web_url}/-/issues/${iid}`,
          },
          labels: [{ id: 206, title: "bug", color: "#dc143c", type: "ProjectLabel" }],
          repository: { name: project.name, url: project.git_ssh_url, homepage: project.web_url },
        });
      },
    },
    {
      eventType: "Pipeline Hook",
      build: (ctx) =>
        hook(ctx, "Pipeline Hook", {
          object_kind: "pipeline",
          object_attributes: {
            id: ctx.int(100_000, 999_999),
            iid: ctx.int(1, 999),
            ref: "main",
            tag: false,
            sha: ctx.id("", 40, "hex"),
            status: "success",
            detailed_status: "passed",
            stages: ["build", "test", "deploy"],
            created_at: time(ctx),
            finished_at: time(ctx),
            duration: 63,
            source: "push",
            url: `${project.web_url}/-/pipelines/1`,
          },
          user,
          project,
          builds: [],
        }),
    },
  ],
};
