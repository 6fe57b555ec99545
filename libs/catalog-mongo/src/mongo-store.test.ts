import { describe } from "vitest";
import { catalogStoreContract } from "@whc/catalog-core/testing";
import { externalServices, mongoTestDatabase, type MongoTestDatabase } from "@whc/testing";
import { openMongoStore } from "./mongo-store.js";

const uri = externalServices().mongodbUri;
if (!uri) console.info("catalog-mongo: WHC_TEST_MONGODB_URI not set; the MongoDB contract suite is skipped (its query documents are still checked with mingo)");

describe.skipIf(!uri)("MongoDB store", () => {
  let db: MongoTestDatabase | undefined;
  catalogStoreContract("MongoDB", {
    async open() {
      db = mongoTestDatabase(uri!);
      return openMongoStore({ uri: uri!, dbName: db.name, writeConcern: "1" });
    },
    async another() {
      return openMongoStore({ uri: uri!, dbName: db!.name, writeConcern: "1" });
    },
    async cleanup() {
      await db?.drop();
    },
  });
});
