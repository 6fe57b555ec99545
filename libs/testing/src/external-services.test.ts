import { describe, it, expect, afterEach } from "vitest";
import { connect } from "nats";
import { externalServices, mongoTestDatabase, testNatsServer } from "./external-services.js";
import { startNatsServer } from "./nats-server.js";

const saved = process.env.WHC_NATS_URL;
afterEach(() => {
  if (saved === undefined) delete process.env.WHC_NATS_URL;
  else process.env.WHC_NATS_URL = saved;
});

describe("servers a test run is given (WHC_NATS_URL, WHC_TEST_MONGODB_URI)", () => {
  it("are read from the environment, blank meaning unset", () => {
    expect(externalServices({ WHC_NATS_URL: " ", WHC_TEST_MONGODB_URI: "" })).toEqual({});
    expect(externalServices({ WHC_NATS_URL: "nats://127.0.0.1:4222", WHC_TEST_MONGODB_URI: "mongodb://127.0.0.1:27017/" })).toEqual({
      natsUrl: "nats://127.0.0.1:4222",
      mongodbUri: "mongodb://127.0.0.1:27017/",
    });
  });

  it("use the given NATS server as it is: never stopped, never paused", async () => {
    const given = await startNatsServer();
    try {
      process.env.WHC_NATS_URL = given.url;
      const nats = await testNatsServer();
      expect(nats.url).toBe(given.url);
      expect(nats.port).toBe(given.port);
      await expect(nats.pause()).rejects.toThrow(/WHC_NATS_URL.*private one/);
      await nats.stop();
      await (await connect({ servers: given.url })).close();

      const own = await testNatsServer({ own: true });
      try {
        expect(own.url).not.toBe(given.url);
      } finally {
        await own.stop();
      }
    } finally {
      await given.stop();
    }
  });

  it("start a private nats-server when none is given", async () => {
    delete process.env.WHC_NATS_URL;
    const nats = await testNatsServer();
    try {
      await (await connect({ servers: nats.url })).close();
    } finally {
      await nats.stop();
    }
  });

  it("give each test a database of its own on the MongoDB server, keeping hosts, credentials and options", () => {
    const a = mongoTestDatabase("mongodb://127.0.0.1:27017/?directConnection=true", "whc_e2e_");
    const b = mongoTestDatabase("mongodb://127.0.0.1:27017/?directConnection=true", "whc_e2e_");
    expect(a.name).toMatch(/^whc_e2e_[0-9a-f]{12}$/);
    expect(a.name).not.toBe(b.name);
    expect(a.uri).toBe(`mongodb://127.0.0.1:27017/${a.name}?directConnection=true`);

    const set = mongoTestDatabase("mongodb://ci:p%2Fw@db1:27017,db2:27018/admin?replicaSet=rs0&authSource=admin");
    expect(set.uri).toBe(`mongodb://ci:p%2Fw@db1:27017,db2:27018/${set.name}?replicaSet=rs0&authSource=admin`);
    expect(mongoTestDatabase("mongodb+srv://cluster.example.net").uri).toMatch(/^mongodb\+srv:\/\/cluster\.example\.net\/whc_test_[0-9a-f]{12}$/);
  });
});
