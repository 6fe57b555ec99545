import path from "node:path";
import type { Client } from "@connectrpc/connect";
import { CatalogService } from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createPeerTransport, createServiceClient } from "@whc/rpc";

/**
 * Key management is not part of /v1: the CLI talks to the catalog itself, over h2c when
 * WHC_CATALOG_URL names one (distributed), or by opening the embedded store in WHC_DATA_DIR
 * (all-in-one; SQLite in WAL mode lets it share the file with a running server).
 */
export function openCatalog(options: { catalogUrl?: string; dataDir: string }): {
  catalog: Client<typeof CatalogService>;
  close(): Promise<void>;
} {
  if (options.catalogUrl) {
    return { catalog: createServiceClient(CatalogService, createPeerTransport(options.catalogUrl, 10_000)), close: async () => {} };
  }
  const store = openSqliteStore({ file: path.join(options.dataDir, "catalog.db") });
  const routes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) =>
    router.service(CatalogService, createCatalogService(store));
  return {
    catalog: createServiceClient(CatalogService, createInMemoryTransport(routes, createLogger("whc", "silent"), 10_000)),
    close: () => store.close(),
  };
}
