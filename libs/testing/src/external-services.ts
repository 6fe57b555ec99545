import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { startNatsServer, type NatsServer } from "./nats-server.js";

/**
 * Servers a test run may be given instead of starting its own: the GitHub workflow's service
 * containers (README, "What runs where"). Read when a test asks, so a test file can set them first.
 * - `WHC_NATS_URL`: a NATS server with JetStream that whole-system tests use.
 * - `WHC_TEST_MONGODB_URI`: a MongoDB replica set (transactions) for the contract suite and the
 *   catalog of the distributed e2e. Unset: those MongoDB runs are skipped, as on the build machines.
 */
export function externalServices(env: NodeJS.ProcessEnv = process.env): { natsUrl?: string; mongodbUri?: string } {
  const natsUrl = env.WHC_NATS_URL?.trim();
  const mongodbUri = env.WHC_TEST_MONGODB_URI?.trim();
  return { ...(natsUrl ? { natsUrl } : {}), ...(mongodbUri ? { mongodbUri } : {}) };
}

/** A server someone else runs: used as it is, never stopped, and it cannot be paused. */
function externalNats(url: string): NatsServer {
  const refuse = () =>
    Promise.reject(new Error(`the NATS server at ${url} (WHC_NATS_URL) is not this test's to pause: start a private one`));
  return { url, port: Number(new URL(url.includes("://") ? url : `nats://${url}`).port || 4222), pause: refuse, resume: refuse, stop: async () => {} };
}

/**
 * The NATS server of a whole-system test: the one at WHC_NATS_URL when set, else a private
 * nats-server. `own: true` always starts a private one (a test that pauses NATS).
 */
export function testNatsServer(options: { own?: boolean } = {}): Promise<NatsServer> {
  const { natsUrl } = externalServices();
  return natsUrl && !options.own ? Promise.resolve(externalNats(natsUrl)) : startNatsServer();
}

export interface MongoTestDatabase {
  /** A database name no other test uses. */
  readonly name: string;
  /** The server URI with that database as its path, for a process configured by WHC_MONGODB_URI. */
  readonly uri: string;
  drop(): Promise<void>;
}

/** A fresh database on the test MongoDB server, dropped when the test is done with it. */
export function mongoTestDatabase(serverUri: string, prefix = "whc_test_"): MongoTestDatabase {
  const name = `${prefix}${randomBytes(6).toString("hex")}`;
  const [base = "", query] = serverUri.split("?", 2);
  // mongodb://[credentials@]host1[:port],host2.../[database]: the database is the path after the hosts.
  const hosts = base.replace(/^(mongodb(?:\+srv)?:\/\/[^/]*).*$/, "$1");
  return {
    name,
    uri: `${hosts}/${name}${query === undefined ? "" : `?${query}`}`,
    async drop() {
      const client = new MongoClient(serverUri);
      try {
        await client.connect();
        await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
