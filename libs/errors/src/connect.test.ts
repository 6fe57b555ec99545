import { describe, it, expect } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { AppError } from "./app-error.js";
import { fromConnectError, toConnectError } from "./connect.js";

describe("AppError over Connect", () => {
  it("keeps reason, field and meta across the wire mapping", () => {
    const original = new AppError("validation_failed", "slug: pattern", {
      field: "slug",
      fieldReason: "pattern",
      meta: { limit: 5 },
    });
    const wire = toConnectError(original);
    expect(wire.code).toBe(Code.InvalidArgument);
    const back = fromConnectError(wire);
    expect(back.reason).toBe("validation_failed");
    expect(back.field).toBe("slug");
    expect(back.fieldReason).toBe("pattern");
    expect(back.meta.limit).toBe("5");
  });

  it("maps bare Connect codes to reasons when no detail travels", () => {
    expect(fromConnectError(new ConnectError("x", Code.Unavailable)).reason).toBe("service_unavailable");
    expect(fromConnectError(new ConnectError("x", Code.NotFound)).reason).toBe("not_found");
    expect(fromConnectError(new ConnectError("x", Code.DeadlineExceeded)).reason).toBe("timeout");
    expect(fromConnectError(new Error("boom")).reason).toBe("internal_error");
  });

  it("never puts an unexpected error's text on the wire", () => {
    const wire = toConnectError(new Error("secret internal detail"));
    expect(wire.code).toBe(Code.Internal);
    expect(wire.rawMessage).not.toContain("secret");
  });

  it("recognises AppErrors from another copy of the module", () => {
    const foreign = Object.assign(Object.create(null), { [Symbol.for("webhook-capture.AppError")]: true });
    expect(AppError.is(foreign)).toBe(true);
    expect(AppError.is(new Error("x"))).toBe(false);
  });
});
