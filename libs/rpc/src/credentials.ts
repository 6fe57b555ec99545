import { hash, timingSafeEqual, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ConfigError } from "@whc/config";
import { Health } from "@whc/contracts";

/**
 * What a distributed process proves on every internal call (docs/operations.md, "Security
 * model"): the deployment's shared token, and with mutual TLS its certificate. The one
 * definition of that check, on both ends; servers and clients take it from here.
 */
export interface InternalCredentials {
  readonly token: string;
  readonly tls?: InternalTls | undefined;
}

/** PEM bytes: this process's certificate and key (server and client alike) and the CA peers are signed by. */
export interface InternalTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

/** The settings the credentials are read from (@whc/config names). */
export interface InternalCredentialSettings {
  readonly internalToken: string | undefined;
  readonly internalTlsCert: string | undefined;
  readonly internalTlsKey: string | undefined;
  readonly internalTlsCa: string | undefined;
}

/** gRPC metadata and HTTP header alike, so a plain grpc-js client sends it as metadata. */
export const INTERNAL_AUTH_HEADER = "authorization";
/**
 * Set on the refusal of a call without the internal token, so that the caller tells it from a
 * service's own UNAUTHENTICATED answer (the catalog refusing a user's API key: unknown, revoked
 * or expired), which must reach the user as their 401.
 */
const TOKEN_REFUSED = "whc-internal-token-refused";
const SCHEME = "Bearer ";
/** Probes (Kubernetes, grpc_health_probe, load balancers) carry no token. */
const OPEN_SERVICES: ReadonlySet<string> = new Set([Health.typeName]);

const TLS_VARIABLES = ["WHC_INTERNAL_TLS_CERT", "WHC_INTERNAL_TLS_KEY", "WHC_INTERNAL_TLS_CA"] as const;

/** The header value a client sends. */
export function internalAuthValue(token: string): string {
  return `${SCHEME}${token}`;
}

/**
 * Reads and checks the credentials at start-up; every problem is a ConfigError naming its
 * variable: no token, one or two of the three TLS files, a file that cannot be read or is not
 * PEM, a key that does not match its certificate, a certificate the CA did not sign, or one
 * past its dates.
 */
export function loadInternalCredentials(settings: InternalCredentialSettings, now = new Date()): InternalCredentials {
  if (!settings.internalToken) {
    throw new ConfigError("WHC_INTERNAL_TOKEN", "must be set: every internal call carries it (e.g. `openssl rand -hex 32`, the same in every service)");
  }
  const paths = [settings.internalTlsCert, settings.internalTlsKey, settings.internalTlsCa];
  const given = paths.filter((p) => p !== undefined).length;
  if (given === 0) return { token: settings.internalToken };
  if (given < 3) {
    const missing = TLS_VARIABLES.filter((_, i) => paths[i] === undefined);
    throw new ConfigError(missing[0] as string, `must be set: mutual TLS takes all three of ${TLS_VARIABLES.join(", ")} or none`);
  }
  const [cert, key, ca] = TLS_VARIABLES.map((variable, i) => readPem(variable, paths[i] as string));
  return { token: settings.internalToken, tls: checkedTls({ cert: cert!, key: key!, ca: ca! }, now) };
}

function readPem(variable: string, file: string): Buffer {
  let text: Buffer;
  try {
    text = readFileSync(file);
  } catch (err) {
    throw new ConfigError(variable, `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}: ${file})`);
  }
  if (!text.includes("-----BEGIN ")) throw new ConfigError(variable, `must be a PEM file, got ${file}`);
  return text;
}

function certificates(variable: string, pem: Buffer): X509Certificate[] {
  const blocks = pem.toString("latin1").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    const certs = blocks.map((b) => new X509Certificate(b));
    if (certs.length > 0) return certs;
  } catch {
    // Reported below, as for a file with no certificate at all.
  }
  throw new ConfigError(variable, "must hold a PEM certificate");
}

function checkedTls(tls: InternalTls, now: Date): InternalTls {
  const [own] = certificates("WHC_INTERNAL_TLS_CERT", tls.cert);
  const authorities = certificates("WHC_INTERNAL_TLS_CA", tls.ca);
  if (new Date(own!.validTo) < now || new Date(own!.validFrom) > now) {
    throw new ConfigError("WHC_INTERNAL_TLS_CERT", `is not valid now (valid from ${own!.validFrom} to ${own!.validTo})`);
  }
  if (!authorities.some((ca) => own!.checkIssued(ca) && own!.verify(ca.publicKey))) {
    throw new ConfigError("WHC_INTERNAL_TLS_CERT", "is not signed by a certificate of WHC_INTERNAL_TLS_CA");
  }
  try {
    createSecureContext({ cert: tls.cert, key: tls.key, ca: tls.ca });
  } catch (err) {
    throw new ConfigError("WHC_INTERNAL_TLS_KEY", `does not go with WHC_INTERNAL_TLS_CERT (${(err as Error).message})`);
  }
  return tls;
}

/**
 * Makes sure every internal URL fits the transport: https: with mutual TLS, http: without
 * (a cleartext client cannot talk to a TLS server, nor the reverse).
 */
export function checkInternalUrl(variable: string, url: string, credentials: InternalCredentials): void {
  const wanted = credentials.tls ? "https:" : "http:";
  if (new URL(url).protocol !== wanted) {
    const why = credentials.tls ? "mutual TLS is on (WHC_INTERNAL_TLS_CERT)" : "mutual TLS is off (no WHC_INTERNAL_TLS_CERT)";
    throw new ConfigError(variable, `must be an ${wanted} URL while ${why}, got ${JSON.stringify(url)}`);
  }
}

/** One-shot SHA-256: a few microseconds per call, against the ~230 µs a Connect call costs its server (design §8). */
const digest = (text: string) => hash("sha256", text, "buffer");

/**
 * Server side: refuses every call without the token, compared in constant time (both sides
 * hashed first, so not even the length is learnt), with UNAUTHENTICATED and a message that
 * says nothing of the token. Health checks pass without one (probes carry none), but one that
 * carries a wrong token is refused like any call: a peer configured with the wrong token then
 * finds its dependency down in its own readiness, instead of ready and failing every call.
 */
export function requireInternalToken(token: string): Interceptor {
  const expected = digest(internalAuthValue(token));
  return (next) => async (req) => {
    const given = req.header.get(INTERNAL_AUTH_HEADER);
    if (given === null && OPEN_SERVICES.has(req.service.typeName)) return next(req);
    if (!timingSafeEqual(digest(given ?? ""), expected)) {
      throw new ConnectError("a valid internal token is required", Code.Unauthenticated, new Headers({ [TOKEN_REFUSED]: "1" }));
    }
    return next(req);
  };
}

/**
 * Client side: every call carries the token. A peer that refuses it is a deployment fault
 * (tokens that differ), not the end user's: it reaches callers as the peer being unavailable,
 * never as the user's own `unauthorized`. The peer's own UNAUTHENTICATED answers (a user's key
 * refused by the catalog) pass as they are.
 */
export function sendInternalToken(token: string): Interceptor {
  const value = internalAuthValue(token);
  return (next) => async (req) => {
    req.header.set(INTERNAL_AUTH_HEADER, value);
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unauthenticated && err.metadata.has(TOKEN_REFUSED)) {
        throw new ConnectError("the peer refused this process's internal token (WHC_INTERNAL_TOKEN differs)", Code.Unavailable, undefined, undefined, err);
      }
      throw err;
    }
  };
}

/** What an HTTP/2 TLS server needs: a client certificate signed by the CA, or no session at all. */
export function tlsServerOptions(tls: InternalTls) {
  return { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true, minVersion: "TLSv1.2" as const };
}

/** What a client needs: its own certificate, and the server's checked against the CA (and the URL's host). */
export function tlsClientOptions(tls: InternalTls) {
  return { cert: tls.cert, key: tls.key, ca: tls.ca, rejectUnauthorized: true, minVersion: "TLSv1.2" as const };
}
