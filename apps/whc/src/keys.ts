import path from "node:path";
import type { Client } from "@connectrpc/connect";
import { CatalogService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createPeerTransport, createServiceClient } from "@whc/rpc";
import { CliError } from "./exit-codes.js";

type CatalogClient = Client<typeof CatalogService>;

/**
 * The embedded store, loaded only when a command opens it: it needs better-sqlite3 (a native
 * module), which the published CLI does not bundle, so every other command runs without it.
 */
async function openEmbeddedCatalog(dataDir: string): Promise<{ catalog: CatalogClient; close(): Promise<void> }> {
  const embedded = await Promise.all([import("@whc/catalog-sqlite"), import("@whc/catalog-core")]).catch((err: unknown) => {
    // The published bundle require()s it (MODULE_NOT_FOUND); an unbundled run imports it.
    if (!["MODULE_NOT_FOUND", "ERR_MODULE_NOT_FOUND"].includes((err as { code?: string }).code ?? "")) throw err;
    throw new CliError(
      "opening the embedded store needs better-sqlite3 beside whc (npm install -g better-sqlite3), or give --catalog-url (WHC_CATALOG_URL)",
    );
  });
  const [{ openSqliteStore }, { createCatalogService }] = embedded;
  const store = openSqliteStore({ file: path.join(dataDir, "catalog.db") });
  const routes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) => router.service(CatalogService, createCatalogService(store));
  return {
    catalog: createServiceClient(CatalogService, createInMemoryTransport(routes, createLogger("whc", "silent"), 10_000)),
    close: () => store.close(),
  };
}

/**
 * Key management is not part of /v1: the CLI talks to the catalog itself, over h2c when
 * WHC_CATALOG_URL names one (distributed), or by opening the embedded store in WHC_DATA_DIR
 * (all-in-one; SQLite in WAL mode lets it share the file with a running server).
 */
export async function openCatalog(options: { catalogUrl?: string; dataDir: string }): Promise<{ catalog: CatalogClient; close(): Promise<void> }> {
  if (options.catalogUrl) {
    return { catalog: createServiceClient(CatalogService, createPeerTransport(options.catalogUrl, 10_000)), close: async () => {} };
  }
  return openEmbeddedCatalog(options.dataDir);
}
