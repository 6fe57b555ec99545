import { describe, it, expect } from "vitest";
import type { ContractContext } from "./endpoint-contract.js";
import { endpointFixture, eventFixture } from "./fixtures.js";

const SETTINGS = '{"headers":["authorization"],"jsonPaths":["$.card.number"],"patterns":["\\\\b\\\\d{13,19}\\\\b"]}';
const COUNTS = '{"headers":1,"jsonPaths":1,"patterns":2}';

/** Redaction (design §16): the endpoint's settings and each event's counts, kept as given. */
export function redactionContract(ctx: ContractContext): void {
  describe("redaction", () => {
    it("keeps an endpoint's settings from its create, replaces them on update and removes them with ''", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const created = await ctx.store().createEndpoint(endpointFixture(accountId, { redactJson: SETTINGS }));
      expect(created.redactJson).toBe(SETTINGS);
      const { redactJson: _r, ...bare } = endpointFixture(accountId);
      expect((await ctx.store().createEndpoint(bare)).redactJson).toBe("");

      const replaced = await ctx.store().updateEndpoint(accountId, created.id, { redactJson: '{"headers":["x-api-key"]}' }, created.updatedAt + 1);
      expect(replaced?.redactJson).toBe('{"headers":["x-api-key"]}');
      const untouched = await ctx.store().updateEndpoint(accountId, created.id, { displayName: "renamed" }, created.updatedAt + 2);
      expect(untouched?.redactJson).toBe('{"headers":["x-api-key"]}');
      const removed = await ctx.store().updateEndpoint(accountId, created.id, { redactJson: "" }, created.updatedAt + 3);
      expect(removed?.redactJson).toBe("");
      expect((await ctx.store().getEndpoint(created.id, accountId))?.redactJson).toBe("");
    });

    it("keeps an event's redaction counts, and none for an event without", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const [redacted, plain] = await ctx.store().appendEvents([eventFixture(endpoint, { redactionsJson: COUNTS }), eventFixture(endpoint)], ctx.clock());
      expect((await ctx.store().getEvent(accountId, endpoint.id, redacted!.id))?.redactionsJson).toBe(COUNTS);
      expect((await ctx.store().getEvent(accountId, endpoint.id, plain!.id))?.redactionsJson).toBe("");
      if (ctx.reopen) {
        await ctx.reopen();
        expect((await ctx.store().getEvent(accountId, endpoint.id, redacted!.id))?.redactionsJson).toBe(COUNTS);
      }
    });
  });
}
