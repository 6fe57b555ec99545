import type { CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { chargeFilter, chargeUpdate, counterId } from "./documents.js";
import { isDuplicate } from "./errors.js";
import { auditDocs, type AnyDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ReplayMethods = Pick<CatalogStore, "chargeReplay" | "getReplayUsage" | "recordReplayAudit">;

/** The daily replay allowance per account, and the audit trail of replays. */
export function createReplay({ counters, audits }: Pick<CatalogCollections, "counters" | "audits">, withAudit: WithAudit): ReplayMethods {
  async function usage(accountId: string, day: string): Promise<number> {
    const d = await counters.findOne({ _id: counterId(accountId, day) });
    return (d?.used as number | undefined) ?? 0;
  }

  return {
    async chargeReplay(accountId, day, limit) {
      if (limit <= 0) return { allowed: false, used: await usage(accountId, day) };
      try {
        const d = await counters.findOneAndUpdate(chargeFilter(accountId, day, limit), chargeUpdate(accountId, day), {
          upsert: true,
          returnDocument: "after",
        });
        return { allowed: true, used: (d as AnyDoc).used as number };
      } catch (err) {
        // The counter exists but did not match: it is at the limit.
        if (isDuplicate(err)) return { allowed: false, used: await usage(accountId, day) };
        throw err;
      }
    },

    getReplayUsage: usage,

    async recordReplayAudit(audit, entry) {
      await withAudit(entry, (session) => audits.insertOne(auditDocs.write(audit), { session }));
    },
  };
}
