import { config } from "zod";

// zod compiles object parsers with `new Function` unless told not to, and probes for it when the
// first object schema is built; the page's policy (no 'unsafe-eval') refuses the probe and
// Chromium reports the refusal as a violation. The schemas are only loaded with the response
// checker, but the bundle orders modules by the page's imports: main.ts imports this first.
config({ jitless: true });
