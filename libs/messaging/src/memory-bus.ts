import { EventEmitter } from "node:events";
import { captureSubject, ENDPOINT_CHANGED_SUBJECT, OUTBOX_WAKE_SUBJECT, type CaptureBus, type CaptureNotice } from "@whc/ports";

/** The all-in-one bus: the same port, delivered within the process. */
export function createMemoryBus(): CaptureBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    kind: "memory",
    publishCapture(notice) {
      emitter.emit(captureSubject(notice.accountId, notice.endpointId), notice);
    },
    listensToCaptures(accountId, endpointId) {
      return emitter.listenerCount(captureSubject(accountId, endpointId)) > 0;
    },
    subscribeCaptures(accountId, endpointId, onNotice) {
      const subject = captureSubject(accountId, endpointId);
      const listener = (n: CaptureNotice) => onNotice(n);
      emitter.on(subject, listener);
      return () => emitter.off(subject, listener);
    },
    publishEndpointChanged(endpointId) {
      emitter.emit(ENDPOINT_CHANGED_SUBJECT, endpointId);
    },
    subscribeEndpointChanges(onChange) {
      emitter.on(ENDPOINT_CHANGED_SUBJECT, onChange);
      return () => emitter.off(ENDPOINT_CHANGED_SUBJECT, onChange);
    },
    publishOutboxWake() {
      emitter.emit(OUTBOX_WAKE_SUBJECT);
    },
    subscribeOutboxWake(onWake) {
      emitter.on(OUTBOX_WAKE_SUBJECT, onWake);
      return () => emitter.off(OUTBOX_WAKE_SUBJECT, onWake);
    },
    connected: () => true,
    async close() {
      emitter.removeAllListeners();
    },
  };
}
