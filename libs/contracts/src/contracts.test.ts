import { describe, it, expect } from "vitest";
import { CatalogService, CryptoService, Health, ReplayService } from "./index.js";

describe("generated contracts", () => {
  it("serve the standard health protocol under its fixed name", () => {
    expect(Health.typeName).toBe("grpc.health.v1.Health");
    expect(Object.keys(Health.method)).toEqual(["check", "list", "watch"]);
  });

  it("live in the webhookcapture.<service>.v1 packages", () => {
    expect(CatalogService.typeName).toBe("webhookcapture.catalog.v1.CatalogService");
    expect(CryptoService.typeName).toBe("webhookcapture.crypto.v1.CryptoService");
    expect(ReplayService.typeName).toBe("webhookcapture.replay.v1.ReplayService");
  });
});
