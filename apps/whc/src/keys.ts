import path from "node:path";
import type { Client } from "@connectrpc/connect";
import { CatalogService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { ConfigError, loadConfig, settings } from "@whc/config";
import { checkInternalUrl, createInMemoryTransport, createPeerTransport, createServiceClient, loadInternalCredentials } from "@whc/rpc";
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
 * A distributed catalog asks for the deployment's internal credentials, as every service
 * does: WHC_INTERNAL_TOKEN and, with mutual TLS, WHC_INTERNAL_TLS_CERT, _KEY and _CA, read from
 * the environment only (a token on the command line would show in `ps`).
 */
function catalogTransport(catalogUrl: string) {
  try {
    const credentials = loadInternalCredentials(
      loadConfig(
        {
          internalToken: settings.internalToken,
          internalTlsCert: settings.internalTlsCert,
          internalTlsKey: settings.internalTlsKey,
          internalTlsCa: settings.internalTlsCa,
        },
        process.env,
      ),
    );
    checkInternalUrl("--catalog-url (WHC_CATALOG_URL)", catalogUrl, credentials);
    return createPeerTransport(catalogUrl, 10_000, credentials);
  } catch (err) {
    if (ConfigError.is(err)) throw new CliError(`${err.message} (whc keys with --catalog-url calls the catalog as the services do)`);
    throw err;
  }
}

/**
 * Key management is not part of /v1: the CLI talks to the catalog itself, over HTTP/2 when
 * WHC_CATALOG_URL names one (distributed), or by opening the embedded store in WHC_DATA_DIR
 * (all-in-one; SQLite in WAL mode lets it share the file with a running server).
 */
export async function openCatalog(options: { catalogUrl?: string; dataDir: string }): Promise<{ catalog: CatalogClient; close(): Promise<void> }> {
  if (options.catalogUrl) {
    return { catalog: createServiceClient(CatalogService, catalogTransport(options.catalogUrl)), close: async () => {} };
  }
  return openEmbeddedCatalog(options.dataDir);
}
