import { isDeepStrictEqual } from "node:util";
import { Document, isMap, isSeq } from "yaml";
import type { AlertChannelJson, ConfigFileInput, EndpointJson } from "@whc/api-model";
import { channelEntry } from "./alert-plan.js";
import { absentValues, destinationEntry, forwardEntry, fromEndpoint, isPlainForward, MANAGED_FIELDS } from "./state.js";

type EndpointEntry = NonNullable<ConfigFileInput["endpoints"]>[number];

/** One endpoint as the file writes it: its slug, then every managed field not at its default. */
export function endpointEntry(e: EndpointJson): EndpointEntry {
  const managed = fromEndpoint(e);
  const absent: Record<string, unknown> = absentValues(e.slug);
  const entry: Record<string, unknown> = { slug: e.slug };
  for (const field of MANAGED_FIELDS) {
    const value = managed[field];
    if (value === undefined || isDeepStrictEqual(value, absent[field])) continue;
    if (field !== "destinations") entry[field] = value;
    // One destination without routing is written as part two's `forward`, any other as `destinations`.
    else if (managed.destinations) {
      if (isPlainForward(managed.destinations)) entry.forward = forwardEntry(managed.destinations[0]!);
      else entry.destinations = managed.destinations.map(destinationEntry);
    }
  }
  return entry as EndpointEntry;
}

/** Where a secret is set that the file cannot hold: said in a comment above the endpoint. */
function secretNote(e: EndpointJson): string | undefined {
  const destinations = fromEndpoint(e).destinations;
  const asForward = destinations !== null && isPlainForward(destinations);
  const notes = [
    ...(e.secretSet ? [" secret set, not exported: to manage it, add secretFromEnv: <VARIABLE>"] : []),
    ...(asForward && e.forward?.targetSecretSet ? [" forward target secret set, not exported: to manage it, add forward.targetSecretFromEnv: <VARIABLE>"] : []),
    ...(asForward
      ? []
      : (e.destinations ?? [])
          .filter((d) => d.targetSecretSet)
          .map((d) => ` destination ${d.name}: target secret set, not exported: to manage it, add its targetSecretFromEnv: <VARIABLE>`)),
    ...(e.inbound?.basicAuth?.passwordSet ? [" inbound basic auth password set, not exported: to manage it, add inbound.basicAuth.passwordFromEnv: <VARIABLE>"] : []),
    ...(e.inbound?.headerToken?.valueSet ? [" inbound header token set, not exported: to manage it, add inbound.headerToken.valueFromEnv: <VARIABLE>"] : []),
  ];
  return notes.length === 0 ? undefined : notes.join("\n");
}

/** Comments above the entries of a list, one per entry (none where `note` says nothing). */
function annotate(doc: Document, key: string, note: (i: number) => string | undefined): void {
  const items = doc.get(key, true);
  if (!isSeq(items)) return;
  items.items.forEach((item, i) => {
    const text = note(i);
    if (text && isMap(item)) item.commentBefore = text;
  });
}

/**
 * The account's endpoints and alert channels as a file `whc apply -f` takes, oldest first.
 * Secrets are never written: a comment says where one is set. Applying it to the same account
 * changes nothing.
 */
export function exportConfig(endpoints: EndpointJson[], channels: AlertChannelJson[] = []): string {
  const slugOf = new Map(endpoints.map((e) => [e.id, e.slug]));
  const doc = new Document({ endpoints: endpoints.map(endpointEntry), alertChannels: channels.map((c) => channelEntry(c, slugOf)) });
  doc.commentBefore =
    " Webhook Capture configuration (whc export-config); whc apply -f <this file> makes an account match it.\n" +
    " Format: docs/webhooks.schema.json.";
  annotate(doc, "endpoints", (i) => secretNote(endpoints[i]!));
  annotate(doc, "alertChannels", (i) =>
    channels[i]!.secretSet ? " secret set, not exported: to manage it, add secretFromEnv: <VARIABLE> (a channel replaced without one gets a new secret)" : undefined,
  );
  return doc.toString({ lineWidth: 0 });
}
