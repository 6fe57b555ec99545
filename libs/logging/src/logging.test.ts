import { describe, it, expect } from "vitest";
import { Writable } from "node:stream";
import { createLogger, requestContext } from "./index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, stream };
}

describe("logger", () => {
  it("stamps every line with the request id in progress", async () => {
    const { lines, stream } = capture();
    const logger = createLogger("svc", "info", stream);
    await requestContext.run({ requestId: "r-1" }, async () => logger.info("inside"));
    logger.info("outside");
    expect(lines[0]).toMatchObject({ service: "svc", requestId: "r-1", msg: "inside" });
    expect(lines[1]!.requestId).toBeUndefined();
  });

  it("redacts secrets, keys and bodies whoever passes them", () => {
    const { lines, stream } = capture();
    createLogger("svc", "info", stream).info(
      { secret: "s3cr3t", body: "payload", req: { headers: { authorization: "Bearer whc_x" } }, target_secret: "t" },
      "x",
    );
    const text = JSON.stringify(lines[0]);
    for (const leaked of ["s3cr3t", "payload", "whc_x", '"t"']) expect(text).not.toContain(leaked);
  });
});
