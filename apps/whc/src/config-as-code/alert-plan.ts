import type { AlertChannelJson, ConfigAlertChannel, ConfigFileInput, CreateAlertChannelRequest, EndpointJson } from "@whc/api-model";

/**
 * The alert channels of `whc apply` (design §16, §18; ADR 0086): matched to the account's by
 * name. /v1 has no update of a channel, so one that differs from the file is replaced (deleted,
 * then created again); its secret is not compared (whc cannot read it back).
 */

/** A channel as the file gives it, endpoints named by slug: what create sends once the slugs are ids. */
export interface ChannelBody extends Omit<CreateAlertChannelRequest, "endpointIds"> {
  endpointSlugs: string[];
}

export type ChannelChange =
  | { action: "create"; name: string; body: ChannelBody }
  | { action: "replace"; name: string; id: string; fields: string[]; body: ChannelBody }
  | { action: "delete"; name: string; id: string };

export interface ChannelPlan {
  changes: ChannelChange[];
  /** Channels of the account the file does not name, left as they are (without --prune). */
  kept: string[];
}

/** What a channel is, for comparing: its type, URL, events and endpoints (slugs; an id no endpoint has stays an id). */
interface Shape {
  type: string;
  url: string;
  events: string[];
  endpoints: string[];
}

const sorted = (values: readonly string[]) => [...new Set(values)].sort();

function shapeOfFile(c: ConfigAlertChannel): Shape {
  return { type: c.type, url: c.url, events: sorted(c.events), endpoints: sorted(c.endpoints ?? []) };
}

function shapeOfChannel(c: AlertChannelJson, slugOf: ReadonlyMap<string, string>): Shape {
  return { type: c.type, url: c.url, events: sorted(c.events), endpoints: sorted(c.endpointIds.map((id) => slugOf.get(id) ?? id)) };
}

function differences(want: Shape, have: Shape): string[] {
  return (["type", "url", "events", "endpoints"] as const).filter((f) => JSON.stringify(want[f]) !== JSON.stringify(have[f]));
}

function bodyOf(c: ConfigAlertChannel, secrets: ReadonlyMap<string, string>): ChannelBody {
  const secret = c.secretFromEnv === undefined ? undefined : secrets.get(c.secretFromEnv);
  return { name: c.name, type: c.type, url: c.url, events: c.events, endpointSlugs: c.endpoints ?? [], ...(secret ? { secret } : {}) };
}

/** The channel changes that make the account match the file: creates and replaces in the file's order, then deletes. */
export function planChannels(
  file: { alertChannels: ConfigAlertChannel[] },
  channels: AlertChannelJson[],
  endpoints: EndpointJson[],
  secrets: ReadonlyMap<string, string>,
  prune: boolean,
): ChannelPlan {
  const slugOf = new Map(endpoints.map((e) => [e.id, e.slug]));
  const byName = new Map(channels.map((c) => [c.name, c]));
  const changes: ChannelChange[] = [];
  for (const c of file.alertChannels) {
    const existing = byName.get(c.name);
    if (!existing) {
      changes.push({ action: "create", name: c.name, body: bodyOf(c, secrets) });
      continue;
    }
    const fields = differences(shapeOfFile(c), shapeOfChannel(existing, slugOf));
    if (fields.length > 0) changes.push({ action: "replace", name: c.name, id: existing.id, fields, body: bodyOf(c, secrets) });
  }
  const named = new Set(file.alertChannels.map((c) => c.name));
  const others = channels.filter((c) => !named.has(c.name));
  if (prune) for (const c of others) changes.push({ action: "delete", name: c.name, id: c.id });
  return { changes, kept: prune ? [] : others.map((c) => c.name) };
}

/** `+ create alert channel <name>`, `~ replace alert channel <name>: <fields>`, `- delete alert channel <name>`. */
export function channelLine(change: ChannelChange): string {
  if (change.action === "create") return `+ create alert channel ${change.name}`;
  if (change.action === "delete") return `- delete alert channel ${change.name}`;
  return `~ replace alert channel ${change.name}: ${change.fields.join(", ")}`;
}

type ChannelEntry = NonNullable<ConfigFileInput["alertChannels"]>[number];

/** A channel as export-config writes it: endpoints by slug (one no longer there is left out), never its secret. */
export function channelEntry(c: AlertChannelJson, slugOf: ReadonlyMap<string, string>): ChannelEntry {
  const endpoints = c.endpointIds.flatMap((id) => (slugOf.has(id) ? [slugOf.get(id)!] : []));
  return { name: c.name, type: c.type, url: c.url, events: c.events, ...(endpoints.length ? { endpoints } : {}) };
}
