import { connect, type NatsConnection } from "nats";
import type { Logger } from "@whc/logging";

/**
 * A NATS connection that never gives up: it keeps trying from the first attempt on and
 * after every outage, so a service started before NATS, or outliving a NATS restart,
 * recovers by itself. Callers get the connection when there is one.
 */
export function createNatsConnection(url: string, name: string, logger: Logger) {
  let nc: NatsConnection | undefined;
  let closed = false;
  let up = false;
  const ready = connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 5_000,
    maxPingOut: 2,
  }).then((conn) => {
    nc = conn;
    up = true;
    logger.info({ url }, "nats connected");
    void (async () => {
      for await (const s of conn.status()) {
        if (s.type === "disconnect") {
          up = false;
          logger.warn({ url }, "nats disconnected");
        } else if (s.type === "reconnect") {
          up = true;
          logger.info({ url }, "nats reconnected");
        }
      }
    })();
    if (closed) void conn.close();
    return conn;
  });
  ready.catch((err: unknown) => logger.error({ err }, "nats connection failed"));
  return {
    ready,
    current: () => nc,
    connected: () => up && nc !== undefined && !nc.isClosed(),
    async close() {
      closed = true;
      if (nc) await nc.drain().catch(() => nc?.close());
    },
  };
}

export type NatsHandle = ReturnType<typeof createNatsConnection>;
