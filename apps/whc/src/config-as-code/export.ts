import { isDeepStrictEqual } from "node:util";
import { Document, isMap, isSeq } from "yaml";
import type { ConfigFileInput, EndpointJson } from "@whc/api-model";
import { absentValues, forwardEntry, fromEndpoint, MANAGED_FIELDS } from "./state.js";

type EndpointEntry = NonNullable<ConfigFileInput["endpoints"]>[number];

/** One endpoint as the file writes it: its slug, then every managed field not at its default. */
export function endpointEntry(e: EndpointJson): EndpointEntry {
  const managed = fromEndpoint(e);
  const absent: Record<string, unknown> = absentValues(e.slug);
  const entry: Record<string, unknown> = { slug: e.slug };
  for (const field of MANAGED_FIELDS) {
    const value = managed[field];
    if (value === undefined || isDeepStrictEqual(value, absent[field])) continue;
    entry[field] = field === "forward" && managed.forward ? forwardEntry(managed.forward) : value;
  }
  return entry as EndpointEntry;
}

/** Where a secret is set that the file cannot hold: said in a comment above the endpoint. */
function secretNote(e: EndpointJson): string | undefined {
  const notes = [
    ...(e.secretSet ? [" secret set, not exported: to manage it, add secretFromEnv: <VARIABLE>"] : []),
    ...(e.forward?.targetSecretSet ? [" forward target secret set, not exported: to manage it, add forward.targetSecretFromEnv: <VARIABLE>"] : []),
  ];
  return notes.length === 0 ? undefined : notes.join("\n");
}

/**
 * The account's endpoints as a file `whc apply -f` takes, oldest first. Secrets are never
 * written: a comment says where one is set. Applying it to the same account changes nothing.
 */
export function exportConfig(endpoints: EndpointJson[]): string {
  const doc = new Document({ endpoints: endpoints.map(endpointEntry), alertChannels: [] });
  doc.commentBefore =
    " Webhook Capture configuration (whc export-config); whc apply -f <this file> makes an account match it.\n" +
    " Format: docs/webhooks.schema.json. Alert channels are not in /v1 yet: none are exported.";
  const items = doc.get("endpoints", true);
  if (isSeq(items)) {
    items.items.forEach((item, i) => {
      const note = secretNote(endpoints[i]!);
      if (note && isMap(item)) item.commentBefore = note;
    });
  }
  return doc.toString({ lineWidth: 0 });
}
