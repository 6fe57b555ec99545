import { jsonRequest, type ProviderSamples } from "../sample.js";

/** deployment.succeeded (vercel.com/docs/webhooks/webhooks-api): id, type, createdAt and payload. */
export const vercelSamples: ProviderSamples = {
  samples: [
    {
      eventType: "deployment.succeeded",
      build: (ctx) => {
        const id = ctx.id("dpl_", 28);
        return jsonRequest([["User-Agent", "Vercel-Webhooks/1.0"]], {
          id: ctx.id("", 24),
          type: "deployment.succeeded",
          createdAt: ctx.nowMs,
          region: "iad1",
          payload: {
            team: { id: ctx.id("team_", 24) },
            user: { id: ctx.id("", 24) },
            deployment: { id, name: "billing-web", url: `billing-web-${ctx.id("", 9, "lower")}.vercel.app`, meta: { githubCommitRef: "main" } },
            links: { deployment: `https://vercel.com/acme/billing-web/${id}`, project: "https://vercel.com/acme/billing-web" },
            target: "production",
            project: { id: ctx.id("prj_", 28) },
            plan: "pro",
            regions: ["iad1"],
          },
        });
      },
    },
  ],
};
