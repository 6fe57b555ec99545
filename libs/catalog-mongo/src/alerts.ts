import type { ClientSession } from "mongodb";
import {
  alertChannelQuotaExceeded,
  channelWants,
  coalesces,
  deliveryNoteOf,
  newId,
  raisedInto,
  recordedAlert,
  type AlertChannelRecord,
  type AlertClaim,
  type AlertRecord,
  type AuditRecord,
  type CatalogStore,
  type RaisedAlert,
} from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import {
  ALERT_CLAIM_ORDER,
  LATEST_ORDER,
  alertChannelGuard,
  alertClaimFilter,
  alertClaimUpdate,
  alertHeldFilter,
  alertKeyFilter,
  alertRecordUpdate,
  finishedAlertsFilter,
  lastDeliveryUpdate,
  nextAlertDueFilter,
  openForRepeatsFilter,
  repeatUpdate,
} from "./alert-documents.js";
import { alertChannelDocs, alertDocs, auditLogDocs, type AnyDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type AlertMethods = Pick<
  CatalogStore,
  "createAlertChannel" | "listAlertChannels" | "deleteAlertChannel" | "raiseAlerts" | "claimAlerts" | "recordAlertAttempt" | "nextAlertDueAt" | "purgeAlerts"
>;

type Collections = Pick<CatalogCollections, "accounts" | "endpoints" | "alertChannels" | "alerts" | "auditLog">;

/**
 * Alert channels and the alert outbox (design §18; ADRs 0085, 0086) in `alert_channels` and
 * `alerts`. A claim is one findOneAndUpdate per alert, as for relay deliveries; a repeat is
 * counted into an open alert by a filter that admits it only while nobody claimed it, so a claim
 * and a repeat never both take one alert. Raising runs in a transaction where the server has them.
 */
export function createAlerts(c: Collections, inTransaction: InTransaction, withAudit: WithAudit): AlertMethods {
  let createChain: Promise<unknown> = Promise.resolve();

  /** Creates under the account's limit: the guard document makes two creates of one account conflict (ADR 0036's way). */
  async function createUnderLimit(channel: AlertChannelRecord, max: number, audit: AuditRecord | undefined): Promise<void> {
    await inTransaction(async (session) => {
      const guard = alertChannelGuard(channel.accountId);
      await c.accounts.updateOne(guard.filter, guard.update, { session });
      if ((await c.alertChannels.countDocuments({ accountId: channel.accountId }, { session, limit: max })) >= max) throw alertChannelQuotaExceeded(max);
      await c.alertChannels.insertOne(alertChannelDocs.write(channel), { session });
      if (audit) await c.auditLog.insertOne(auditLogDocs.write(audit), { session });
    });
  }

  /** One occurrence for one channel: counted into the key's open alert, else a new one (raisedInto). */
  async function raiseFor(channel: AlertChannelRecord, r: RaisedAlert, at: { now: number; windowMs: number; endpointSlug: string }, session?: ClientSession): Promise<string> {
    const latestDoc = coalesces(r)
      ? await c.alerts.find(alertKeyFilter(channel.id, r.type, r.endpointId ?? ""), { session }).sort(LATEST_ORDER).limit(1).next()
      : null;
    const latest = latestDoc ? alertDocs.read(latestDoc) : undefined;
    const next = raisedInto(latest, r, channel, { ...at, id: newId() });
    if (next.kind === "merge") {
      const { matchedCount } = await c.alerts.updateOne(openForRepeatsFilter(next.alert.id), repeatUpdate(next.alert), { session });
      if (matchedCount > 0) return next.alert.id;
      // Claimed since it was read: the repeat opens the key's next window.
      const after = raisedInto({ ...latest!, started: latest!.started + 1 }, r, channel, { ...at, id: newId() });
      await c.alerts.insertOne(alertDocs.write(after.alert), { session });
      return after.alert.id;
    }
    await c.alerts.insertOne(alertDocs.write(next.alert), { session });
    return next.alert.id;
  }

  return {
    // A second channel of one name fails the unique (accountId, name) index: errors.ts names it.
    async createAlertChannel(channel, maxPerAccount, audit) {
      const run = createChain.then(() => createUnderLimit(channel, maxPerAccount, audit));
      createChain = run.catch(() => undefined);
      await run;
      return channel;
    },

    async listAlertChannels(accountId) {
      const docs = await c.alertChannels.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((d) => alertChannelDocs.read(d));
    },

    async deleteAlertChannel(accountId, channelId, audit) {
      return withAudit(
        audit,
        async (session) => {
          const { deletedCount } = await c.alertChannels.deleteOne({ _id: channelId, accountId }, { session });
          if (deletedCount > 0) await c.alerts.deleteMany({ channelId }, { session });
          return deletedCount > 0;
        },
        (deleted) => deleted,
      );
    },

    async raiseAlerts(raised, now, windowMs) {
      return inTransaction(async (session) => {
        const channelsOf = new Map<string, AlertChannelRecord[]>();
        const ids: string[] = [];
        for (const r of raised) {
          let channels = channelsOf.get(r.accountId);
          if (!channels) {
            channels = (await c.alertChannels.find({ accountId: r.accountId }, { session }).toArray()).map((d) => alertChannelDocs.read(d));
            channelsOf.set(r.accountId, channels);
          }
          const wanting = channels.filter((ch) => channelWants(ch, r));
          if (wanting.length === 0) continue;
          const endpoint = r.endpointId ? await c.endpoints.findOne({ _id: r.endpointId, accountId: r.accountId }, { session, projection: { slug: 1 } }) : null;
          const endpointSlug = (endpoint?.slug as string | undefined) ?? "";
          for (const channel of wanting) ids.push(await raiseFor(channel, r, { now, windowMs, endpointSlug }, session));
        }
        return [...new Set(ids)];
      });
    },

    async claimAlerts(owner, now, claimMs, limit) {
      const claimed: AlertRecord[] = [];
      while (claimed.length < limit) {
        const d = await c.alerts.findOneAndUpdate(alertClaimFilter(now), alertClaimUpdate(owner, now, claimMs), { sort: ALERT_CLAIM_ORDER, returnDocument: "after" });
        if (!d) break;
        claimed.push(alertDocs.read(d));
      }
      if (claimed.length === 0) return [];
      const channels = await c.alertChannels.find({ _id: { $in: [...new Set(claimed.map((a) => a.channelId))] } }).toArray();
      const byId = new Map(channels.map((d: AnyDoc) => [d._id, alertChannelDocs.read(d)]));
      return claimed.flatMap((alert): AlertClaim[] => {
        const channel = byId.get(alert.channelId);
        return channel ? [{ alert, channel, attempt: alert.started }] : [];
      });
    },

    async recordAlertAttempt(alertId, owner, n, result) {
      return inTransaction(async (session) => {
        const d = await c.alerts.findOneAndUpdate(alertHeldFilter(alertId, owner, n), alertRecordUpdate(result), { returnDocument: "before", session });
        if (!d) return false;
        const after = recordedAlert(alertDocs.read(d), owner, n, result)!;
        await c.alertChannels.updateOne({ _id: after.channelId }, lastDeliveryUpdate(deliveryNoteOf(after)), { session });
        return true;
      });
    },

    async nextAlertDueAt(after) {
      const next = await c.alerts.find(nextAlertDueFilter(after), { projection: { nextAttemptAt: 1 } }).sort(ALERT_CLAIM_ORDER).limit(1).next();
      return (next?.nextAttemptAt as number | undefined) ?? undefined;
    },

    async purgeAlerts(before) {
      return (await c.alerts.deleteMany(finishedAlertsFilter(before))).deletedCount;
    },
  };
}
