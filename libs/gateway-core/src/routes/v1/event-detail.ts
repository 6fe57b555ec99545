import { hash } from "node:crypto";
import type { Event, Forward } from "@whc/contracts";
import { openCapture, type EnvelopeOpener } from "@whc/sealing";
import type { EventDetailJson } from "@whc/api-model";
import { eventDetailJson } from "@whc/api-model/present";

/**
 * A delivery's attempts' answer excerpts in clear, by attempt index; one that cannot be opened
 * (its key left the ring, or it fails its tag) is shown empty. A crypto outage fails the read,
 * as it does for the event's own body.
 */
async function openAttemptBodies(opener: EnvelopeOpener, endpointId: string, delivery: Forward) {
  return Promise.all(
    delivery.attempts.map(async (a) => {
      if (!a.body || a.body.ciphertext.length === 0) return undefined;
      const opened = await opener.open(endpointId, a.body);
      return opened.ok ? opened.plaintext : undefined;
    }),
  );
}

/** The diagnostic's bodySha256 of a body stored as received (ingest leaves it to the reader). */
const sha256 = (plaintext: Uint8Array) => hash("sha256", plaintext, "hex");

/**
 * An event as operation 6 shows it, with what is sealed opened (its body, and its headers,
 * sub-path and query: ADR 0009): the one place that turns a stored event into its detail, so
 * the event read and the bulk export answer the same JSON. `destinationNames` names its
 * deliveries (destinationNamesOf the endpoint's; without it they show "").
 */
export async function openEventDetail(opener: EnvelopeOpener, e: Event, destinationNames?: ReadonlyMap<string, string>): Promise<EventDetailJson> {
  const [opened, attemptBodies] = await Promise.all([
    openCapture(opener, e),
    Promise.all(e.deliveries.map((d) => openAttemptBodies(opener, e.endpointId, d))),
  ]);
  return eventDetailJson(opened.event, { decryption: opened.decryption, plaintext: opened.body, attemptBodies, destinationNames, sha256 });
}
