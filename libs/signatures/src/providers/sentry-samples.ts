import { jsonRequest, type ProviderSamples } from "../sample.js";

/** An issue created (docs.sentry.io, integration platform webhooks): the resource in Sentry-Hook-Resource. */
export const sentrySamples: ProviderSamples = {
  samples: [
    {
      eventType: "issue.created",
      build: (ctx) => {
        const id = String(ctx.int(1_000_000_000, 4_000_000_000));
        return jsonRequest(
          [
            ["User-Agent", "sentry"],
            ["Request-ID", ctx.id("", 32, "hex")],
            ["Sentry-Hook-Resource", "issue"],
            ["Sentry-Hook-Timestamp", String(ctx.unix)],
          ],
          {
            action: "created",
            installation: { uuid: ctx.uuid() },
            data: {
              issue: {
                id,
                shortId: "BILLING-3K",
                title: "TypeError: Cannot read properties of undefined (reading 'amount')",
                culprit: "retryInvoice(billing/retry)",
                level: "error",
                status: "unresolved",
                platform: "javascript",
                project: { id: "4505", name: "billing", slug: "billing", platform: "node" },
                count: "1",
                userCount: 1,
                firstSeen: ctx.iso,
                lastSeen: ctx.iso,
                permalink: `https://example.sentry.io/issues/${id}/`,
                web_url: `https://example.sentry.io/issues/${id}/`,
              },
            },
            actor: { type: "application", id: "sentry", name: "Sentry" },
          },
        );
      },
    },
  ],
};
