import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { connect } from "nats";
import { freePort, reservePort, waitFor } from "./ports.js";
import { startNatsServer } from "./nats-server.js";

describe("test helpers", () => {
  it("find a port that can be listened on", async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    server.close();
  });

  it("reserve each port they hand out against every other test process while this one lives", async () => {
    const ports = [];
    for (let i = 0; i < 200; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(200);
    for (const port of ports.slice(0, 5)) {
      expect(fs.readFileSync(path.join(os.tmpdir(), "whc-test-ports", String(port)), "utf8")).toBe(String(process.pid));
    }
  });

  it("take over a port reservation whose process is gone, never one whose process lives", () => {
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const port = 19_999;
    const file = path.join(os.tmpdir(), "whc-test-ports", String(port));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, String(process.ppid));
    expect(reservePort(port)).toBe(false);
    fs.writeFileSync(file, String(dead));
    expect(reservePort(port)).toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe(String(process.pid));
    expect(reservePort(port)).toBe(false);
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
