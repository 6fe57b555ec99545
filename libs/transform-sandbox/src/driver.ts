/**
 * The script each run evaluates inside QuickJS before the transform's source. It keeps its own
 * references to JSON and Promise (the source may replace the globals), installs Math.random and
 * a console that writes nowhere, and parses the request. It returns an object the host calls:
 *
 * - `call()`: calls `transform(req)`; "#missing" when no function of that name is defined.
 * - `finish()`, after the host ran the pending jobs: the result as JSON text, or a marker
 *   ("#pending": a returned promise never settled; "#undefined"; "#type:<typeof>"; "#json:<why>":
 *   the result could not be written as JSON). A rejected promise is thrown.
 * - `describe(e)`: an exception as one line, with the place in transform.js it was thrown from.
 *
 * Math.random: QuickJS seeds its generator from the clock, which is fixed during a run, so every
 * run with the same `now` would draw the same numbers; the host's random seeds are used instead
 * (xoshiro128**, 53 bits a draw). A transform that makes an id gets a new one each run.
 */
export const DRIVER_SOURCE = String.raw`(function (input, a, b, c, d) {
  "use strict";
  const parse = JSON.parse, stringify = JSON.stringify, resolve = Promise.resolve.bind(Promise);
  const exec = RegExp.prototype.exec, where = /transform\.js:(\d+):(\d+)/;
  let s0 = a >>> 0 || 1, s1 = b >>> 0, s2 = c >>> 0, s3 = d >>> 0;
  const next = function () {
    const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11);
    return r;
  };
  function rotl(x, k) { return (x << k) | (x >>> (32 - k)); }
  Math.random = function random() { return (next() * 2097152 + (next() >>> 11)) / 9007199254740992; };
  const quiet = function () {};
  Object.defineProperty(globalThis, "console", {
    value: { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet },
    writable: true, configurable: true, enumerable: false,
  });
  const req = parse(input);
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
      if (state === 2) throw failure;
      if (value === undefined) return "#undefined";
      if (typeof value !== "object") return "#type:" + typeof value;
      try {
        return stringify(value);
      } catch (e) {
        return "#json:" + this.describe(e);
      }
    },
    describe(e) {
      try {
        if (e instanceof Error) {
          const at = exec.call(where, String(e.stack));
          return String(e.name) + ": " + String(e.message) + (at ? " (line " + at[1] + ", column " + at[2] + ")" : "");
        }
        return "a thrown " + (e === null ? "null" : typeof e) + ": " + String(e);
      } catch (_) {
        return "an exception that cannot be described";
      }
    },
  };
})`;
