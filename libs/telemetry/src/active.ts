/**
 * Whether startTracing registered a provider. The instrumentation asks this before touching
 * the OpenTelemetry API, so a process without an endpoint does no tracing work at all (not
 * even no-op spans and contexts) on its hot paths.
 */
let active = false;

export function tracingActive(): boolean {
  return active;
}

export function setTracingActive(value: boolean): void {
  active = value;
}
