import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";

export const OPENSSL_BIN = process.env.WHC_OPENSSL_BIN ?? "/usr/bin/openssl";

/** PEM file paths: a certificate and its key, signed by `ca`. */
export interface TestCertificate {
  ca: string;
  cert: string;
  key: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync(OPENSSL_BIN, args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A self-signed CA, `<name>-ca.crt` and `<name>-ca.key` in `dir`. */
function makeCa(dir: string, name: string): { crt: string; key: string } {
  const crt = path.join(dir, `${name}-ca.crt`);
  const key = path.join(dir, `${name}-ca.key`);
  openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
    "-subj", `/CN=${name} test CA`, "-keyout", key, "-out", crt,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  return { crt, key };
}

/**
 * A certificate for internal calls, as docs/operations.md ("Security model") makes one: one key
 * pair used as server and client (extendedKeyUsage both), its names in subjectAltName.
 */
function makeLeaf(dir: string, name: string, ca: { crt: string; key: string }, names: string[]): { crt: string; key: string } {
  const crt = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${names.join(",")}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n`);
  openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", `/CN=${name}`, "-keyout", key, "-out", csr);
  openssl(dir, "x509", "-req", "-in", csr, "-CA", ca.crt, "-CAkey", ca.key, "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", crt);
  return { crt, key };
}

/**
 * Made at test time in `dir` (never committed) with the machine's openssl: `good`, a certificate
 * for 127.0.0.1 and localhost signed by the deployment's CA; `stranger`, the same names signed by
 * another CA (its `ca` is that other CA).
 */
export function makeTestCertificates(dir: string): { good: TestCertificate; stranger: TestCertificate } {
  const names = ["IP:127.0.0.1", "DNS:localhost"];
  const ca = makeCa(dir, "deployment");
  const other = makeCa(dir, "other");
  const good = makeLeaf(dir, "internal", ca, names);
  const stranger = makeLeaf(dir, "stranger", other, names);
  return {
    good: { ca: ca.crt, cert: good.crt, key: good.key },
    stranger: { ca: other.crt, cert: stranger.crt, key: stranger.key },
  };
}
