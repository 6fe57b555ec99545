import { jsonRequest, type JsonValue, type ProviderSamples, type SampleContext } from "../sample.js";

const ORGANIZATION = "a6b8c4d2-3e1f-4a5b-9c7d-0e2f4a6b8c1d";
const TEAM = { id: "72b2a2dc-6f4f-4423-9d34-24b5bd10634a", key: "ENG", name: "Engineering" };
const ACTOR = { id: "2e6eea91-1111-0000-9486-acea0603064d", type: "user", name: "Linear Developer", email: "dev@example.com" };

/**
 * Linear's data change webhook (linear.app/developers/webhooks): the entity type and action,
 * the entity in `data`, and webhookTimestamp (ms), which the signature covers with the rest.
 */
function change(ctx: SampleContext, type: string, action: string, data: JsonValue, url: string, extra: Record<string, JsonValue> = {}) {
  return jsonRequest(
    [
      ["User-Agent", "Linear-Webhook"],
      ["Linear-Event", type],
      ["Linear-Delivery", ctx.uuid()],
    ],
    {
      action,
      actor: ACTOR,
      createdAt: ctx.iso,
      data,
      url,
      type,
      organizationId: ORGANIZATION,
      webhookTimestamp: ctx.nowMs,
      webhookId: "000042e3-d123-4980-b49f-8e140eef9329",
      ...extra,
    },
  );
}

function issue(ctx: SampleContext, number: number, state: string) {
  return {
    id: ctx.uuid(),
    createdAt: ctx.iso,
    updatedAt: ctx.iso,
    number,
    title: "Invoices are sent twice",
    description: "Since yesterday every customer receives two invoice emails.",
    priority: 2,
    priorityLabel: "High",
    estimate: 3,
    identifier: `${TEAM.key}-${number}`,
    url: `https://linear.app/example/issue/${TEAM.key}-${number}`,
    teamId: TEAM.id,
    team: TEAM,
    stateId: ctx.uuid(),
    state: { id: ctx.uuid(), name: state, type: state === "Done" ? "completed" : "unstarted", color: "#e2e2e2" },
    creatorId: ACTOR.id,
    assigneeId: null,
    labelIds: [],
    labels: [],
  };
}

export const linearSamples: ProviderSamples = {
  samples: [
    {
      eventType: "Issue.create",
      build: (ctx) => {
        const data = issue(ctx, ctx.int(100, 999), "Todo");
        return change(ctx, "Issue", "create", data, data.url);
      },
    },
    {
      eventType: "Issue.update",
      build: (ctx) => {
        const data = issue(ctx, ctx.int(100, 999), "Done");
        return change(ctx, "Issue", "update", data, data.url, { updatedFrom: { updatedAt: new Date(ctx.nowMs - 60_000).toISOString(), stateId: ctx.uuid() } });
      },
    },
    {
      eventType: "Comment.create",
      build: (ctx) => {
        const number = ctx.int(100, 999);
        const id = ctx.uuid();
        const url = `https://linear.app/example/issue/${TEAM.key}-${number}#comment-${id.slice(0, 8)}`;
        return change(
          ctx,
          "Comment",
          "create",
          { id, createdAt: ctx.iso, updatedAt: ctx.iso, body: "Reproduced on staging.", issueId: ctx.uuid(), userId: ACTOR.id, issue: { id: ctx.uuid(), title: "Invoices are sent twice", identifier: `${TEAM.key}-${number}` } },
          url,
        );
      },
    },
    {
      eventType: "Project.update",
      build: (ctx) => {
        const id = ctx.uuid();
        const url = `https://linear.app/example/project/billing-${id.slice(0, 12)}`;
        return change(ctx, "Project", "update", { id, name: "Billing v2", state: "started", progress: 0.4, targetDate: "2026-12-31", leadId: ACTOR.id, createdAt: ctx.iso, updatedAt: ctx.iso }, url, {
          updatedFrom: { progress: 0.3 },
        });
      },
    },
  ],
};
