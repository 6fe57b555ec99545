import type { Event, Forward } from "@whc/contracts";
import { openCapture, type EnvelopeOpener } from "@whc/sealing";
import type { EventDetailJson } from "@whc/api-model";
import { eventDetailJson } from "@whc/api-model/present";

/**
 * The forward attempts' answer excerpts in clear, by attempt index; one that cannot be opened
 * (its key left the ring, or it fails its tag) is shown empty. A crypto outage fails the read,
 * as it does for the event's own body.
 */
async function openAttemptBodies(opener: EnvelopeOpener, endpointId: string, forward: Forward | undefined) {
  return Promise.all(
    (forward?.attempts ?? []).map(async (a) => {
      if (!a.body || a.body.ciphertext.length === 0) return undefined;
      const opened = await opener.open(endpointId, a.body);
      return opened.ok ? opened.plaintext : undefined;
    }),
  );
}

/**
 * An event as operation 6 shows it, with what is sealed opened (its body, and its headers,
 * sub-path and query: ADR 0009): the one place that turns a stored event into its detail, so
 * the event read and the bulk export answer the same JSON.
 */
export async function openEventDetail(opener: EnvelopeOpener, e: Event): Promise<EventDetailJson> {
  const [opened, attemptBodies] = await Promise.all([openCapture(opener, e), openAttemptBodies(opener, e.endpointId, e.forward)]);
  return eventDetailJson(opened.event, { decryption: opened.decryption, plaintext: opened.body, attemptBodies });
}
