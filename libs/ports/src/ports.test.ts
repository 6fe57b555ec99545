import { describe, it, expect } from "vitest";
import { captureSubject, ENDPOINT_CHANGED_SUBJECT } from "./index.js";

describe("shared port names", () => {
  it("notifies captures on whc.capture.<accountId>.<endpointId> (design §6), endpoint changes apart", () => {
    expect(captureSubject("acct", "0190a5b4-0000-7000-8000-000000000001")).toBe("whc.capture.acct.0190a5b4-0000-7000-8000-000000000001");
    expect(ENDPOINT_CHANGED_SUBJECT.startsWith("whc.capture.")).toBe(false);
  });
});
