import type Database from "better-sqlite3";
import {
  alertChannelNameTaken,
  alertChannelQuotaExceeded,
  channelWants,
  claimedAlert,
  coalesces,
  deliveryNoteOf,
  newId,
  raisedInto,
  recordedAlert,
  type AlertAttemptResult,
  type AlertChannelRecord,
  type AlertClaim,
  type AlertRecord,
  type AuditRecord,
  type CatalogStore,
  type RaisedAlert,
} from "@whc/catalog-core";
import type { WriteAudit } from "./audit.js";
import { alertChannelRows, alertRows, alertUpdate, type Row } from "./rows.js";

export type AlertMethods = Pick<
  CatalogStore,
  "createAlertChannel" | "listAlertChannels" | "deleteAlertChannel" | "raiseAlerts" | "claimAlerts" | "recordAlertAttempt" | "nextAlertDueAt" | "purgeAlerts"
>;

/** Finished alerts deleted per transaction: a purge never holds the write lock for long. */
const PURGE_CHUNK = 2000;

/**
 * Alert channels and the alert outbox (design §18; ADRs 0085, 0086) in `alert_channels` and
 * `alerts`. Every write is an IMMEDIATE transaction applying catalog-core's reference functions
 * (raisedInto, claimedAlert, recordedAlert) to the rows it read under the write lock, so two
 * stores on one file never both count a repeat into an alert a claim has taken, nor both claim
 * one alert.
 */
export function createAlerts(db: Database.Database, writeAudit: WriteAudit): AlertMethods {
  const channelColumns = alertChannelRows.columns("c");
  const alertColumns = alertRows.columns("a");
  const stmt = {
    countChannels: db.prepare("SELECT count(*) FROM alert_channels WHERE account_id = ?").pluck(),
    nameTaken: db.prepare("SELECT 1 FROM alert_channels WHERE account_id = ? AND name = ?").pluck(),
    insertChannel: db.prepare(alertChannelRows.insertSql()),
    channels: db.prepare(`SELECT ${channelColumns} FROM alert_channels c WHERE c.account_id = ? ORDER BY c.created_at, c.id`),
    channel: db.prepare(`SELECT ${channelColumns} FROM alert_channels c WHERE c.id = ?`),
    deleteChannel: db.prepare("DELETE FROM alert_channels WHERE account_id = ? AND id = ?"),
    deleteChannelAlerts: db.prepare("DELETE FROM alerts WHERE channel_id = ?"),
    lastDelivery: db.prepare("UPDATE alert_channels SET last_delivery = ? WHERE id = ?"),
    slug: db.prepare("SELECT slug FROM endpoints WHERE id = ? AND account_id = ?").pluck(),
    latest: db.prepare(
      `SELECT ${alertColumns} FROM alerts a WHERE a.channel_id = ? AND a.type = ? AND a.endpoint_id = ? ORDER BY a.due_at DESC, a.id DESC LIMIT 1`,
    ),
    insertAlert: db.prepare(alertRows.insertSql()),
    updateAlert: db.prepare(alertUpdate.sql),
    alert: db.prepare(`SELECT ${alertColumns} FROM alerts a WHERE a.id = ?`),
    due: db.prepare(
      `SELECT ${alertColumns} FROM alerts a WHERE a.state = 'pending' AND a.next_attempt_at <= ?
        AND (a.claim_until IS NULL OR a.claim_until <= ?) ORDER BY a.next_attempt_at, a.id LIMIT ?`,
    ),
    nextDue: db.prepare("SELECT min(next_attempt_at) FROM alerts WHERE state = 'pending' AND next_attempt_at > ?").pluck(),
    purgeChunk: db.prepare(`DELETE FROM alerts WHERE id IN (SELECT id FROM alerts WHERE state <> 'pending' AND due_at < ? LIMIT ${PURGE_CHUNK})`),
  };
  const readChannel = (row: unknown) => alertChannelRows.read(row as Row);
  const readAlert = (row: unknown) => alertRows.read(row as Row);
  const updateAlert = (a: AlertRecord) => stmt.updateAlert.run(...alertUpdate.values(a), a.id);

  const createTx = db.transaction((channel: AlertChannelRecord, maxPerAccount: number, audit: AuditRecord | undefined) => {
    if ((stmt.countChannels.get(channel.accountId) as number) >= maxPerAccount) throw alertChannelQuotaExceeded(maxPerAccount);
    if (stmt.nameTaken.get(channel.accountId, channel.name) !== undefined) throw alertChannelNameTaken();
    stmt.insertChannel.run(...alertChannelRows.values(channel));
    writeAudit(audit);
    return channel;
  });

  const deleteTx = db.transaction((accountId: string, channelId: string, audit: AuditRecord | undefined) => {
    if (stmt.deleteChannel.run(accountId, channelId).changes === 0) return false;
    stmt.deleteChannelAlerts.run(channelId);
    writeAudit(audit);
    return true;
  });

  const raiseTx = db.transaction((raised: readonly RaisedAlert[], now: number, windowMs: number) => {
    const channelsOf = new Map<string, AlertChannelRecord[]>();
    const ids: string[] = [];
    for (const r of raised) {
      let channels = channelsOf.get(r.accountId);
      if (!channels) channelsOf.set(r.accountId, (channels = stmt.channels.all(r.accountId).map(readChannel)));
      const wanting = channels.filter((c) => channelWants(c, r));
      if (wanting.length === 0) continue;
      const endpointSlug = r.endpointId ? ((stmt.slug.get(r.endpointId, r.accountId) as string | undefined) ?? "") : "";
      for (const channel of wanting) {
        const latestRow = coalesces(r) ? stmt.latest.get(channel.id, r.type, r.endpointId ?? "") : undefined;
        const next = raisedInto(latestRow ? readAlert(latestRow) : undefined, r, channel, { now, windowMs, id: newId(), endpointSlug });
        if (next.kind === "merge") updateAlert(next.alert);
        else stmt.insertAlert.run(...alertRows.values(next.alert));
        ids.push(next.alert.id);
      }
    }
    return [...new Set(ids)];
  });

  const claimTx = db.transaction((owner: string, now: number, claimMs: number, limit: number): AlertClaim[] => {
    const claims: AlertClaim[] = [];
    for (const row of stmt.due.all(now, now, limit)) {
      const alert = claimedAlert(readAlert(row), owner, now, claimMs);
      const channelRow = stmt.channel.get(alert.channelId);
      if (!channelRow) continue;
      updateAlert(alert);
      claims.push({ alert, channel: readChannel(channelRow), attempt: alert.started });
    }
    return claims;
  });

  const recordTx = db.transaction((alertId: string, owner: string, n: number, result: AlertAttemptResult): boolean => {
    const row = stmt.alert.get(alertId);
    if (!row) return false;
    const after = recordedAlert(readAlert(row), owner, n, result);
    if (!after) return false;
    updateAlert(after);
    stmt.lastDelivery.run(JSON.stringify(deliveryNoteOf(after)), after.channelId);
    return true;
  });

  return {
    async createAlertChannel(channel, maxPerAccount, audit) {
      return createTx.immediate(channel, maxPerAccount, audit);
    },

    async listAlertChannels(accountId) {
      return stmt.channels.all(accountId).map(readChannel);
    },

    async deleteAlertChannel(accountId, channelId, audit) {
      return deleteTx.immediate(accountId, channelId, audit);
    },

    async raiseAlerts(raised, now, windowMs) {
      return raiseTx.immediate(raised, now, windowMs);
    },

    async claimAlerts(owner, now, claimMs, limit) {
      return claimTx.immediate(owner, now, claimMs, limit);
    },

    async recordAlertAttempt(alertId, owner, n, result) {
      return recordTx.immediate(alertId, owner, n, result);
    },

    async nextAlertDueAt(after) {
      return (stmt.nextDue.get(after) as number | null) ?? undefined;
    },

    async purgeAlerts(before) {
      let total = 0;
      for (;;) {
        const { changes } = stmt.purgeChunk.run(before);
        total += changes;
        if (changes < PURGE_CHUNK) return total;
      }
    },
  };
}
