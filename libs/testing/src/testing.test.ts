import { describe, it, expect } from "vitest";
import net from "node:net";
import { connect } from "nats";
import { freePort, waitFor } from "./ports.js";
import { startNatsServer } from "./nats-server.js";

describe("test helpers", () => {
  it("find a port that can be listened on", async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    server.close();
  });

  it("wait for a condition and give up with its name", async () => {
    let n = 0;
    expect(await waitFor(() => (++n >= 3 ? n : undefined), { intervalMs: 1 })).toBe(3);
    await expect(waitFor(() => undefined, { timeoutMs: 50, what: "never" })).rejects.toThrow(/never/);
  });

  it("run a private nats-server that can be paused and resumed", async () => {
    const nats = await startNatsServer();
    try {
      const nc = await connect({ servers: nats.url });
      await nc.close();
      await nats.pause();
      await expect(connect({ servers: nats.url, reconnect: false, timeout: 500 })).rejects.toThrow();
      await nats.resume();
      await (await connect({ servers: nats.url })).close();
    } finally {
      await nats.stop();
    }
  });
});
