/**
 * The e2e files the project `e2e-2` runs, beside `e2e` (which runs the others): each project runs
 * its files one at a time, and the two go side by side, so the e2e, the longest task of
 * `npm test`, takes about half as long. Chosen by their durations in CI (2026-11-27: 912 s in
 * all, one file at a time), about half each.
 */
export const SECOND_HALF = [
  "dashboard-views.test.ts",
  "export.test.ts",
  "delivery-control.test.ts",
  "redelivery.test.ts",
  "dedupe.test.ts",
  "disk-full.test.ts",
  "alerts.test.ts",
  // With dashboard-views: the two Chromium files build the page, not one in each half at once.
  "dashboard-forwarding.test.ts",
  // 2026-11-28: the e2e ended 163 s after the e2e-2 in a fresh-clone CI (656 s against 454 s).
  "listen.test.ts",
] as const;
