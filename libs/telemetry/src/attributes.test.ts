import * as semconv from "@opentelemetry/semantic-conventions";
import { describe, expect, it } from "vitest";
import * as attributes from "./attributes.js";

describe("attribute names", () => {
  it("are the semantic-conventions package's own", () => {
    const names = Object.keys(attributes);
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) expect(attributes[name as keyof typeof attributes], name).toBe((semconv as Record<string, unknown>)[name]);
  });
});
