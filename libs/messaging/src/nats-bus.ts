import { JSONCodec, type Subscription } from "nats";
import type { Logger } from "@whc/logging";
import { captureSubject, ENDPOINT_CHANGED_SUBJECT, OUTBOX_WAKE_SUBJECT, type CaptureBus, type CaptureNotice } from "@whc/ports";
import type { NatsHandle } from "./nats-connection.js";

const codec = JSONCodec<unknown>();

/**
 * Capture notifications on core NATS: subject whc.capture.<accountId>.<endpointId>, payload
 * the event summary as JSON (never a body). Core publish is at-most-once; readers do not
 * rely on it for correctness, only for promptness.
 */
export function createNatsBus(handle: NatsHandle, logger: Logger): CaptureBus {
  function subscribe(subject: string, onMessage: (data: unknown) => void) {
    let sub: Subscription | undefined;
    let cancelled = false;
    void handle.ready.then((nc) => {
      if (cancelled) return;
      sub = nc.subscribe(subject, {
        callback: (err, msg) => {
          if (err) return;
          try {
            onMessage(codec.decode(msg.data));
          } catch (e) {
            logger.warn({ err: e, subject }, "undecodable notification dropped");
          }
        },
      });
    });
    return () => {
      cancelled = true;
      sub?.unsubscribe();
    };
  }

  function publish(subject: string, data: unknown) {
    const nc = handle.current();
    if (!nc || nc.isClosed()) return;
    try {
      nc.publish(subject, codec.encode(data));
    } catch (err) {
      logger.warn({ err, subject }, "notification not published");
    }
  }

  return {
    kind: "nats",
    publishCapture(notice) {
      publish(captureSubject(notice.accountId, notice.endpointId), notice.summary);
    },
    subscribeCaptures(accountId, endpointId, onNotice) {
      return subscribe(captureSubject(accountId, endpointId), (summary) =>
        onNotice({ accountId, endpointId, summary } as CaptureNotice),
      );
    },
    publishEndpointChanged(endpointId) {
      publish(ENDPOINT_CHANGED_SUBJECT, { endpointId });
    },
    subscribeEndpointChanges(onChange) {
      return subscribe(ENDPOINT_CHANGED_SUBJECT, (data) => {
        const id = (data as { endpointId?: unknown }).endpointId;
        if (typeof id === "string") onChange(id);
      });
    },
    publishOutboxWake() {
      publish(OUTBOX_WAKE_SUBJECT, {});
    },
    subscribeOutboxWake(onWake) {
      return subscribe(OUTBOX_WAKE_SUBJECT, () => onWake());
    },
    connected: () => handle.connected(),
    close: () => handle.close(),
  };
}
