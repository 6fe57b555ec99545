import { describe, expect, it } from "vitest";
import { MongoNetworkError, MongoNotConnectedError, MongoServerError } from "mongodb";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "@whc/catalog-core";
import { translatingErrors } from "@whc/catalog-core";
import { translateMongoError } from "./errors.js";

const duplicate = () => new MongoServerError({ code: 11000, errmsg: "E11000 duplicate key error collection: whc.endpoints index: accountId_1_slug_1" });

describe("MongoDB failures as AppError reasons", () => {
  it("an unreachable server or a retryable failure is service_unavailable", () => {
    for (const err of [new MongoNetworkError("connect ECONNREFUSED 198.51.100.7:27017"), new MongoNotConnectedError("client on db7.internal not connected")]) {
      const translated = translateMongoError(err, "listEndpoints");
      expect(translated.reason).toBe("service_unavailable");
      expect(translated.cause).toBe(err);
    }
    const retryable = new MongoServerError({ code: 91, errmsg: "shutting down" });
    retryable.addErrorLabel("RetryableWriteError");
    expect(translateMongoError(retryable, "appendEvents").reason).toBe("service_unavailable");
  });

  it("a duplicate key is slug_taken when creating an endpoint, conflict elsewhere", () => {
    const slug = translateMongoError(duplicate(), "createEndpoint");
    expect(slug.reason).toBe("slug_taken");
    expect(slug.field).toBe("slug");
    expect(translateMongoError(duplicate(), "recordReplayAudit").reason).toBe("conflict");
  });

  it("anything else is internal_error; no message carries the driver's text", () => {
    const err = new MongoServerError({ code: 13, errmsg: "not authorized on whc_prod to execute command" });
    const translated = translateMongoError(err, "listEvents");
    expect(translated.reason).toBe("internal_error");
    expect(translated.cause).toBe(err);
    expect(translateMongoError(new TypeError("x is undefined"), "getEvent").reason).toBe("internal_error");
    for (const e of [err, duplicate(), new MongoNetworkError("connect ECONNREFUSED 198.51.100.7:27017")]) {
      expect(translateMongoError(e, "createEndpoint").message).not.toContain((e as Error).message);
    }
  });

  it("an AppError passes through as it is", () => {
    const conflict = new AppError("conflict", "key already belongs to another account");
    expect(translateMongoError(conflict, "ensureApiKey")).toBe(conflict);
  });

  it("translatingErrors applies to every method, sync throws included, and keeps results", async () => {
    const calls: string[] = [];
    const store = translatingErrors(
      {
        kind: "mongodb",
        async ping() {
          calls.push("ping");
          return true;
        },
        async createEndpoint() {
          throw duplicate();
        },
        listEndpoints() {
          throw new MongoNetworkError("down");
        },
      } as unknown as CatalogStore,
      translateMongoError,
    );
    expect(store.kind).toBe("mongodb");
    expect(await store.ping()).toBe(true);
    expect(calls).toEqual(["ping"]);
    await expect(store.createEndpoint({} as never)).rejects.toMatchObject({ reason: "slug_taken" });
    await expect(store.listEndpoints("a")).rejects.toMatchObject({ reason: "service_unavailable" });
  });
});
