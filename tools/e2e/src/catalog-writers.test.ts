import { describe, it, expect, beforeAll, afterAll } from "vitest";
import fc from "fast-check";
import { createHash, randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { CatalogService, type Endpoint } from "@whc/contracts";
import { createPeerTransport, createServiceClient, type InternalCredentials } from "@whc/rpc";
import { buildApps, freePort, startNode, tempDir, type RunningProcess } from "@whc/testing";

/**
 * Two catalog processes (the built dist/catalog) appending to one endpoint at once, on one
 * SQLite file in WAL mode, and on one MongoDB database when WHC_TEST_MONGODB_URI is set: a
 * client polling forward with `after` while they append sees every event exactly once, in
 * (receivedAt, id) order (ADR 0008).
 */
const mongoUri = process.env.WHC_TEST_MONGODB_URI;
if (!mongoUri) console.info("catalog-writers: WHC_TEST_MONGODB_URI not set; two catalogs on one MongoDB database are skipped (two on one SQLite file run)");

type Catalog = ReturnType<typeof catalogClient>;

const credentials: InternalCredentials = { token: randomBytes(32).toString("hex") };

function catalogClient(url: string) {
  return createServiceClient(CatalogService, createPeerTransport(url, 20_000, credentials));
}

/** The URI with its database part replaced by `dbName` (hosts and options kept). */
function withDatabase(uri: string, dbName: string): string {
  const scheme = uri.indexOf("://") + 3;
  const slash = uri.indexOf("/", scheme);
  const query = uri.indexOf("?", scheme);
  const hostsEnd = slash >= 0 ? slash : query >= 0 ? query : uri.length;
  return `${uri.slice(0, hostsEnd)}/${dbName}${query >= 0 ? uri.slice(query) : ""}`;
}

interface Writers {
  catalogs: Catalog[];
  procs: RunningProcess[];
  stop(): Promise<void>;
}

/** Two catalog processes over one store, started at the same moment (both migrate at once). */
async function startWriters(store: "sqlite" | "mongodb"): Promise<Writers> {
  const { catalog: main } = buildApps("catalog");
  const dir = tempDir("whc-e2e-writers-");
  const dbName = `whc_writers_${randomBytes(6).toString("hex")}`;
  const env = {
    WHC_INTERNAL_TOKEN: credentials.token,
    WHC_DATA_DIR: dir.path,
    ...(store === "mongodb" ? { WHC_MONGODB_URI: withDatabase(mongoUri!, dbName), WHC_MONGODB_WRITE_CONCERN: "1" } : {}),
  };
  const ports = [await freePort(), await freePort()];
  const procs = ports.map((port) => startNode(main!, { ...env, WHC_CATALOG_PORT: String(port) }));
  await Promise.all(procs.map((p) => p.waitForOutput(/catalog ready/))).catch(async (err: unknown) => {
    // Nothing left running when the start fails.
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    dir.remove();
    throw err;
  });
  return {
    catalogs: ports.map((port) => catalogClient(`http://127.0.0.1:${port}`)),
    procs,
    async stop() {
      await Promise.all(procs.map((p) => p.stop()));
      if (store === "mongodb") {
        const client = new MongoClient(mongoUri!);
        await client.connect();
        await client.db(dbName).dropDatabase();
        await client.close();
      }
      dir.remove();
    },
  };
}

/** A metadata-only capture: what is stored does not matter here, only its stamp. */
/** A metadata-only capture in the form ingest appends (its size tells the captures apart; nothing here is sealed). */
function capture(endpoint: Endpoint, n: number) {
  return {
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    method: "POST",
    remoteIp: "203.0.113.9",
    provider: "generic",
    verification: "unverified",
    responseCode: 200,
    originalSizeBytes: BigInt(n),
    diagnosticJson: "{}",
    forwardedResponseJson: "{}",
  };
}

const stamped = (e: { receivedAtMs: bigint; id: string }) => ({ receivedAtMs: e.receivedAtMs, id: e.id });
const before = (a: { receivedAtMs: bigint; id: string }, b: { receivedAtMs: bigint; id: string }) =>
  a.receivedAtMs < b.receivedAtMs || (a.receivedAtMs === b.receivedAtMs && a.id < b.id);

function writersSuite(store: "sqlite" | "mongodb"): void {
  let writers: Writers;
  let accountId = "";

  beforeAll(async () => {
    writers = await startWriters(store);
    const { key } = await writers.catalogs[0]!.ensureApiKey({
      accountName: "writers",
      keyHash: createHash("sha256").update("writers").digest(),
      prefix: "whc_writ",
    });
    accountId = key!.accountId;
  }, 120_000);
  afterAll(async () => {
    await writers?.stop();
  });

  it("both answer, over one store", async () => {
    const [a, b] = writers.catalogs;
    const { endpoint } = await a!.createEndpoint({
      endpoint: { accountId, slug: `seen-${randomBytes(4).toString("hex")}`, displayName: "x", operatingMode: "capture", status: "active", provider: "generic", source: "api" },
    });
    expect((await b!.getEndpoint({ endpointId: endpoint!.id, accountId })).endpoint?.slug).toBe(endpoint!.slug);
  });

  it("a client polling forward with after sees every event once, in order, while both append to one endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(
        // Rounds of appends sent at once: each a batch size and the catalog it goes to.
        fc.array(fc.array(fc.record({ size: fc.integer({ min: 1, max: 12 }), writer: fc.integer({ min: 0, max: 1 }) }), { minLength: 1, maxLength: 6 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 1 }),
        async (rounds, limit, readerOf) => {
          const [first] = writers.catalogs;
          const { endpoint } = await first!.createEndpoint({
            endpoint: { accountId, slug: `w-${randomBytes(6).toString("hex")}`, displayName: "writers", operatingMode: "capture", status: "active", provider: "generic", source: "api" },
          });
          const reader = writers.catalogs[readerOf]!;
          const seen: { receivedAtMs: bigint; id: string }[] = [];
          let after = { receivedAtMs: 0n, id: "00000000-0000-7000-8000-000000000000" };
          /** One forward poll, to the newest: what a client following the endpoint does. */
          const pollOnce = async () => {
            for (;;) {
              const page = await reader.listEvents({ accountId, endpointId: endpoint!.id, after, limit });
              if (page.events.length === 0) return;
              // A page is newest first: the oldest `limit` events after the cursor.
              const oldestFirst = [...page.events].reverse().map(stamped);
              seen.push(...oldestFirst);
              after = oldestFirst[oldestFirst.length - 1]!;
            }
          };
          // One client: its polls follow each other.
          let polling = Promise.resolve();
          const poll = () => (polling = polling.then(pollOnce));
          let appending = true;
          // The reader polls all the time the rounds run, and between them.
          const following = (async () => {
            while (appending) await poll();
          })();
          const appended: string[] = [];
          let n = 0;
          for (const round of rounds) {
            const answers = await Promise.all(
              round.map(({ size, writer }) =>
                writers.catalogs[writer]!.appendEvents({ captures: Array.from({ length: size }, () => capture(endpoint!, n++)) }),
              ),
            );
            for (const { events } of answers) appended.push(...events.map((e) => e.id));
            await poll();
          }
          appending = false;
          await following;
          await poll();

          expect(seen.map((s) => s.id).sort()).toEqual([...appended].sort());
          expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
          for (let i = 1; i < seen.length; i += 1) expect(before(seen[i - 1]!, seen[i]!)).toBe(true);
        },
      ),
      { numRuns: store === "sqlite" ? 30 : 15 },
    );
  }, 300_000);

  it("keeps the endpoint's count and response sequence exact under both", async () => {
    const [a, b] = writers.catalogs;
    const { endpoint } = await a!.createEndpoint({
      endpoint: { accountId, slug: `seq-${randomBytes(4).toString("hex")}`, displayName: "x", operatingMode: "capture", status: "active", provider: "generic", source: "api" },
    });
    const answered = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a! : b!).appendEvents({ captures: [{ ...capture(endpoint!, i), sequenceStatuses: [500, 200] }] }),
      ),
    );
    const indexes = answered.map(({ events }) => Number(events[0]!.sequenceIndex)).sort((x, y) => x - y);
    expect(indexes).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await b!.getEndpoint({ endpointId: endpoint!.id, accountId })).endpoint?.eventCount).toBe(20n);
  });
}

describe("two catalog processes appending to one SQLite file (WAL)", () => {
  writersSuite("sqlite");
});

describe.skipIf(!mongoUri)("two catalog processes appending to one MongoDB database", () => {
  writersSuite("mongodb");
});
