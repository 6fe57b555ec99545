import { describe } from "vitest";
import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { catalogStoreContract } from "@whc/catalog-core/testing";
import { openMongoStore } from "./mongo-store.js";

const uri = process.env.WHC_TEST_MONGODB_URI;
if (!uri) console.info("catalog-mongo: WHC_TEST_MONGODB_URI not set; the MongoDB contract suite is skipped (its query documents are still checked with mingo)");

describe.skipIf(!uri)("MongoDB store", () => {
  let dbName = "";
  catalogStoreContract("MongoDB", {
    async open() {
      dbName = `whc_test_${randomBytes(6).toString("hex")}`;
      return openMongoStore({ uri: uri!, dbName, writeConcern: "1" });
    },
    async cleanup() {
      const client = new MongoClient(uri!);
      await client.connect();
      await client.db(dbName).dropDatabase();
      await client.close();
    },
  });
});
