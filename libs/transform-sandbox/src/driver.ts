/**
 * The script each run evaluates inside QuickJS before the transform's source. It keeps its own
 * references to JSON.stringify and Promise (the source may replace the globals), installs a
 * console that writes nowhere, and parses the request. It returns an object the host calls:
 *
 * - `call()`: calls `transform(req)`; "#missing" when no function of that name is defined.
 * - `finish()`, after the host ran the pending jobs: the result as JSON text, or a marker:
 *   "#pending" (a returned promise never settled), "#rejected", "#undefined", "#type:<typeof>",
 *   "#json" (the result could not be written as JSON).
 * - `failure()`: throws what the promise rejected with, or what writing the JSON threw.
 *
 * Compiled on every run (a fresh runtime cannot reuse another's bytecode; QuickJS compiled this
 * at roughly 0.1 ms a KB here), so it is kept short, and what only failures need is apart.
 */
export const DRIVER_SOURCE = `(function (input) {
  "use strict";
  const stringify = JSON.stringify, resolve = Promise.resolve.bind(Promise), quiet = function () {};
  Object.defineProperty(globalThis, "console", { value: { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet }, writable: true, configurable: true });
  const req = JSON.parse(input);
  let state = 0, value, failure;
  return {
    call() {
      if (typeof transform !== "function") return "#missing";
      const r = transform(req);
      if (r !== null && (typeof r === "object" || typeof r === "function") && typeof r.then === "function") {
        resolve(r).then(function (v) { state = 1; value = v; }, function (e) { state = 2; failure = e; });
      } else {
        state = 1; value = r;
      }
      return "#called";
    },
    finish() {
      if (state === 0) return "#pending";
      if (state === 2) return "#rejected";
      if (value === undefined) return "#undefined";
      if (typeof value !== "object") return "#type:" + typeof value;
      try { return stringify(value); } catch (e) { failure = e; return "#json"; }
    },
    failure() { throw failure; },
  };
})`;

/**
 * Compiled only when a run failed: an exception as one line, with the place in transform.js it
 * was thrown from. It runs after the transform's code, under the same budget.
 */
export const DESCRIBE_SOURCE = String.raw`(function (e) {
  "use strict";
  try {
    if (e instanceof Error) {
      const at = /transform\.js:(\d+):(\d+)/.exec(String(e.stack));
      return String(e.name) + ": " + String(e.message) + (at ? " (line " + at[1] + ", column " + at[2] + ")" : "");
    }
    return "a thrown " + (e === null ? "null" : typeof e) + ": " + String(e);
  } catch (_) {
    return "an exception that cannot be described";
  }
})`;
