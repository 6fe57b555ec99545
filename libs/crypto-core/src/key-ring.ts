import { existsSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { ConfigError, ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from "@whc/config";
import { open, seal } from "@whc/sealing";

export interface MasterKey {
  id: string;
  key: Buffer;
}

/**
 * The master keys (the first one active) and the blind-index key. Only the crypto service
 * holds a KeyRing.
 */
export interface KeyRing {
  readonly active: MasterKey;
  readonly keys: ReadonlyMap<string, MasterKey>;
  readonly blindIndexKey: Buffer;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const WRAP_VERSION = 1;

function decodeKey(variable: string, text: string): Buffer {
  const key = Buffer.from(text, "base64");
  if (key.length !== 32) throw new ConfigError(variable, "must hold base64 keys of exactly 32 bytes");
  return key;
}

export function createKeyRing(masterKeys: MasterKey[], blindIndexKey: Buffer): KeyRing {
  const [active] = masterKeys;
  if (!active) throw new ConfigError("WHC_MASTER_KEYS", "must name at least one key");
  const keys = new Map<string, MasterKey>();
  for (const k of masterKeys) {
    if (!KEY_ID.test(k.id)) throw new ConfigError("WHC_MASTER_KEYS", `has a bad key id ${JSON.stringify(k.id)}`);
    if (keys.has(k.id)) throw new ConfigError("WHC_MASTER_KEYS", `names key ${k.id} twice`);
    keys.set(k.id, k);
  }
  return { active, keys, blindIndexKey };
}

interface KeyFile {
  masterKeys: { id: string; key: string }[];
  blindIndexKey: string;
}

export interface KeyRingSource {
  /** From WHC_MASTER_KEYS; empty: use (or create) the key file. */
  masterKeys: { name: string; value: string }[];
  /** From WHC_BLIND_INDEX_KEY. */
  blindIndexKey: string | undefined;
  dataDir: string;
}

/**
 * The ring from the environment when WHC_MASTER_KEYS is set; otherwise from
 * `<dataDir>/keyring.json`, generated (mode 0600, in a 0700 directory) on first start so that all-in-one needs
 * no set-up. A blind-index key, once used, must never change: search tokens depend on it.
 */
export function loadKeyRing(source: KeyRingSource): { ring: KeyRing; generated: boolean } {
  const file = path.join(source.dataDir, "keyring.json");
  let stored: KeyFile | undefined;
  if (existsSync(file)) {
    ensurePrivateFile(file);
    try {
      stored = JSON.parse(readFileSync(file, "utf8")) as KeyFile;
    } catch {
      throw new ConfigError("WHC_DATA_DIR", `holds an unreadable ${file}`);
    }
  }
  let generated = false;
  if (!stored && (source.masterKeys.length === 0 || !source.blindIndexKey)) {
    stored = {
      masterKeys: [{ id: `k${Date.now().toString(36)}`, key: randomBytes(32).toString("base64") }],
      blindIndexKey: randomBytes(32).toString("base64"),
    };
    ensurePrivateDir(source.dataDir);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(stored, null, 2), { mode: PRIVATE_FILE_MODE });
    renameSync(tmp, file);
    generated = true;
  }
  const masterKeys =
    source.masterKeys.length > 0
      ? source.masterKeys.map((k) => ({ id: k.name, key: decodeKey("WHC_MASTER_KEYS", k.value) }))
      : (stored as KeyFile).masterKeys.map((k) => ({ id: k.id, key: decodeKey("WHC_DATA_DIR", k.key) }));
  const blindIndexKey = source.blindIndexKey
    ? decodeKey("WHC_BLIND_INDEX_KEY", source.blindIndexKey)
    : decodeKey("WHC_DATA_DIR", (stored as KeyFile).blindIndexKey);
  return { ring: createKeyRing(masterKeys, blindIndexKey), generated };
}

export type WrapPurpose = "data-key" | "endpoint-secret";

function aadOf(purpose: WrapPurpose, keyId: string): Buffer {
  return Buffer.from(`${purpose}:${keyId}`, "utf8");
}

/**
 * Seals a small value (a data key, an endpoint secret) under the active master key:
 * version(1) | idLength(1) | id | AES-GCM(master, value, aad = purpose:id). The purpose in
 * the AAD keeps a wrapped data key from ever being opened as a secret, and the reverse.
 */
export function wrapKey(
  ring: KeyRing,
  value: Uint8Array,
  purpose: WrapPurpose = "data-key",
): { wrapped: Buffer; keyId: string } {
  const id = Buffer.from(ring.active.id, "utf8");
  const sealed = seal(ring.active.key, value, aadOf(purpose, ring.active.id));
  return { wrapped: Buffer.concat([Buffer.from([WRAP_VERSION, id.length]), id, sealed]), keyId: ring.active.id };
}

export function wrappedKeyId(wrapped: Uint8Array): string | undefined {
  if (wrapped.length < 2 || wrapped[0] !== WRAP_VERSION) return undefined;
  const len = wrapped[1] as number;
  return Buffer.from(wrapped.subarray(2, 2 + len)).toString("utf8");
}

/** Throws when the wrapping key left the ring or the bytes were altered. */
export function unwrapKey(
  ring: KeyRing,
  wrapped: Uint8Array,
  purpose: WrapPurpose = "data-key",
): { dataKey: Buffer; keyId: string } {
  const keyId = wrappedKeyId(wrapped);
  if (keyId === undefined) throw new Error("unknown wrapped key format");
  const master = ring.keys.get(keyId);
  if (!master) throw new Error(`master key ${keyId} is not in the ring`);
  const len = wrapped[1] as number;
  const dataKey = open(master.key, wrapped.subarray(2 + len), aadOf(purpose, keyId));
  return { dataKey, keyId };
}
