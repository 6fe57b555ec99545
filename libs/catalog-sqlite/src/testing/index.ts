import path from "node:path";
import { expect } from "vitest";
import { AppError, type ErrorReason } from "@whc/errors";
import type { ReplayAuditRecord } from "@whc/catalog-core";
import { endpointFixture, keyHash } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { openSqliteStore } from "../sqlite-store.js";

/** A new catalog file in a temporary directory, with one account (`name`) and one endpoint. */
export async function catalogWithEndpoint(name: string) {
  const where = tempDir(`whc-sqlite-${name}-`);
  const file = path.join(where.path, "catalog.db");
  const store = openSqliteStore({ file });
  const { key } = await store.ensureApiKey(name, keyHash(name), `whc_${name.slice(0, 4)}`, 1);
  const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
  return { file, store, endpoint, remove: () => where.remove() };
}

/**
 * Awaits a call expected to fail with an AppError of `reason` whose message holds none of
 * the driver's own text (that stays in the cause, whose result code must be `code`).
 */
export async function expectReason(call: Promise<unknown>, reason: ErrorReason, code?: string): Promise<AppError> {
  const err = await call.then(
    () => expect.unreachable(`resolved; expected ${reason}`),
    (e: unknown) => e,
  );
  expect(AppError.is(err), String(err)).toBe(true);
  const appError = err as AppError;
  expect(appError.reason).toBe(reason);
  const cause = appError.cause as { message?: string; code?: string } | undefined;
  if (code !== undefined) expect(cause?.code).toBe(code);
  if (cause?.message) expect(appError.message).not.toContain(cause.message);
  return appError;
}

export function auditFixture(id: string): ReplayAuditRecord {
  return {
    id,
    accountId: "a",
    endpointId: "e",
    eventId: "v",
    keyId: "k",
    targetUrl: "https://example.test/hook",
    mode: "exact",
    result: "delivered",
    targetStatus: 200,
    networkFailureReason: "",
    durationMs: 12,
    createdAt: 1,
    requestId: "r",
    client: "api",
  };
}
