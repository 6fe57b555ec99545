import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import { parseOrThrow } from "./validation.js";
import { listEventsQuery as listEventsQuerySchema } from "@whc/api-model";
import { createEndpointBody as createEndpointSchema } from "./routes/v1/endpoints.js";
import { errorTable } from "./errors-table.js";

function failure(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    if (AppError.is(err)) return { field: err.field, reason: err.fieldReason };
    throw err;
  }
  throw new Error("did not fail");
}

describe("request validation", () => {
  it("names the field and the reason of the first problem", () => {
    expect(failure(() => parseOrThrow(createEndpointSchema, { slug: "UP" }))).toEqual({ field: "slug", reason: "pattern" });
    expect(failure(() => parseOrThrow(createEndpointSchema, { extra: 1 }))).toEqual({ field: "extra", reason: "unknown" });
    expect(failure(() => parseOrThrow(createEndpointSchema, { replayFromApi: "yes" }))).toEqual({
      field: "replayFromApi",
      reason: "type",
    });
  });

  it("checks list parameters, cursor pairs included", () => {
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { limit: "0" }))).toEqual({ field: "limit", reason: "range" });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { limit: "201" }))).toEqual({ field: "limit", reason: "range" });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { wait: "61" }))).toEqual({ field: "wait", reason: "range" });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { before: "2026-01-01T00:00:00Z" }))).toEqual({
      field: "beforeId",
      reason: "required",
    });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { from: "yesterday" }))).toEqual({ field: "from", reason: "format" });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { limit: ["1", "2"] }))).toEqual({ field: "limit", reason: "type" });
    expect(failure(() => parseOrThrow(listEventsQuerySchema, { colour: "red" }))).toEqual({ field: "colour", reason: "unknown" });
    expect(parseOrThrow(listEventsQuerySchema, { wait: "25s", limit: "10", responseCode: "413" })).toMatchObject({
      wait: 25,
      limit: 10,
      responseCode: 413,
    });
  });

  it("gives every error code one fixed message without details of the cause", () => {
    for (const entry of Object.values(errorTable)) {
      expect(entry.message).toMatch(/^[A-Z].*\.$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
    }
  });
});
