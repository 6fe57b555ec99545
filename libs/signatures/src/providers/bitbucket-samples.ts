import { jsonRequest, type ProviderSamples } from "../sample.js";

const actor = { display_name: "Emma", uuid: "{a1b2c3d4-e5f6-4789-abcd-ef0123456789}", nickname: "emma", type: "user", account_id: "557058:a1b2c3d4" };
const repository = { full_name: "team/billing", name: "billing", uuid: "{0c7f7a5e-1b2c-4d3e-8f9a-0b1c2d3e4f5a}", type: "repository", is_private: true, links: { html: { href: "https://bitbucket.org/team/billing" } } };

/** A repository push (support.atlassian.com, "Event payloads"): the event in X-Event-Key. */
export const bitbucketSamples: ProviderSamples = {
  samples: [
    {
      eventType: "repo:push",
      build: (ctx) => {
        const hash = ctx.id("", 40, "hex");
        return jsonRequest(
          [
            ["User-Agent", "Bitbucket-Webhooks/2.0"],
            ["X-Event-Key", "repo:push"],
            ["X-Hook-UUID", ctx.uuid()],
            ["X-Request-UUID", ctx.uuid()],
            ["X-Attempt-Number", "1"],
          ],
          {
            actor,
            repository,
            push: {
              changes: [
                {
                  new: { type: "branch", name: "main", target: { type: "commit", hash, message: "Fix the billing retry\n", date: ctx.iso, author: { raw: "Emma <emma@example.com>" } } },
                  old: { type: "branch", name: "main", target: { type: "commit", hash: ctx.id("", 40, "hex") } },
                  created: false,
                  forced: false,
                  closed: false,
                  commits: [{ hash, message: "Fix the billing retry\n", type: "commit" }],
                  truncated: false,
                },
              ],
            },
          },
        );
      },
    },
  ],
};
