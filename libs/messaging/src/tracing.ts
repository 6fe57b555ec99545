import { headers as natsHeaders, type MsgHdrs } from "nats";
import { SpanKind, context, propagation, trace, type TextMapGetter, type TextMapSetter } from "@opentelemetry/api";
import { failSpan, tracer, tracingActive } from "@whc/telemetry";

/** `messaging.system` and friends (incubating in semantic-conventions 1.45, so written here). */
const ATTR_MESSAGING_SYSTEM = "messaging.system";
const ATTR_MESSAGING_DESTINATION_NAME = "messaging.destination.name";
const ATTR_MESSAGING_DESTINATION_TEMPLATE = "messaging.destination.template";
const ATTR_MESSAGING_OPERATION_TYPE = "messaging.operation.type";

const setter: TextMapSetter<MsgHdrs> = { set: (carrier, key, value) => carrier.set(key, value) };
const getter: TextMapGetter<MsgHdrs> = {
  get: (carrier, key) => carrier.get(key) || undefined,
  keys: (carrier) => carrier.keys(),
};

const attributes = (subject: string, template: string, operation: string) => ({
  [ATTR_MESSAGING_SYSTEM]: "nats",
  [ATTR_MESSAGING_DESTINATION_NAME]: subject,
  [ATTR_MESSAGING_DESTINATION_TEMPLATE]: template,
  [ATTR_MESSAGING_OPERATION_TYPE]: operation,
});

/**
 * Publishes inside a `send <template>` producer span whose W3C trace context travels in the
 * message's headers. `template` names the subject without its ids (whc.capture for
 * whc.capture.<account>.<endpoint>). Without tracing: a plain publish, no headers.
 */
export function publishTraced(subject: string, template: string, publish: (headers?: MsgHdrs) => void): void {
  if (!tracingActive()) return publish();
  const span = tracer().startSpan(`send ${template}`, { kind: SpanKind.PRODUCER, attributes: attributes(subject, template, "send") });
  const headers = natsHeaders();
  propagation.inject(trace.setSpan(context.active(), span), headers, setter);
  try {
    publish(headers);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Handles a message inside a `process <template>` consumer span continuing the publisher's trace. */
export function processTraced(subject: string, template: string, headers: MsgHdrs | undefined, handle: () => void): void {
  if (!tracingActive()) return handle();
  const parent = headers ? propagation.extract(context.active(), headers, getter) : context.active();
  const span = tracer().startSpan(`process ${template}`, { kind: SpanKind.CONSUMER, attributes: attributes(subject, template, "process") }, parent);
  try {
    context.with(trace.setSpan(parent, span), handle);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}
