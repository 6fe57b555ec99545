import { createHmac, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  DETECTION_ORDER,
  detectProvider,
  PROVIDER_NAMES,
  PROVIDERS,
  providerCatalog,
  providers,
  providerScheme,
  type HeaderPair,
  type Provider,
  type SignatureOptions,
  type VerifyOutcome,
} from "./index.js";
import { NOW_MS } from "./testing/index.js";

/** A whsec_ secret, so that Standard Webhooks signs with its decoded key and the others with its bytes. */
const SECRET = Buffer.from("whsec_cmVnaXN0cnkgcm91bmQgdHJpcCBrZXkgMDEyMzQ1Njc4OQ==");
const OTHER_SECRET = Buffer.from("whsec_YW5vdGhlciBrZXksIG5vdCB0aGUgb25lIHRoYXQgc2lnbmVk");
const BODY = Buffer.from('{"type":"registry.checked","id":"evt_1"}');
const ACME: SignatureOptions = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };

const entries = Object.entries(providers) as [Provider, (typeof providers)[Provider]][];

/** An asymmetric scheme's secrets: it signs with a private key and verifies with the public one. */
interface KeyPair {
  sign: Buffer;
  verify: Buffer;
  /** The public key of another pair, for the wrong-secret case. */
  otherVerify: Buffer;
}

/** Discord: verify with the 64-hex-digit public key, sign with the PKCS#8 PEM private key. */
function ed25519Pair(): { sign: Buffer; verify: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    sign: Buffer.from(privateKey.export({ format: "pem", type: "pkcs8" })),
    verify: Buffer.from(publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("hex")),
  };
}

/** SendGrid: verify with the base64 SPKI DER public key, sign with the PKCS#8 PEM private key. */
function p256Pair(): { sign: Buffer; verify: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    sign: Buffer.from(privateKey.export({ format: "pem", type: "pkcs8" })),
    verify: Buffer.from(publicKey.export({ format: "der", type: "spki" }).toString("base64")),
  };
}

const keyPair = (make: () => { sign: Buffer; verify: Buffer }): KeyPair => ({ ...make(), otherVerify: make().verify });

/** How a provider's detection is exercised; `detectable: false` names why its own samples must never detect it. */
type Detection =
  | {
      detectable?: true;
      /** Headers it always sends with its signature, without which its signature headers are not detected as it: added to every signed sample. */
      identifiedWith?: HeaderPair[];
      /** Headers it sends besides its signature, only it: a sample on their own. */
      sends?: HeaderPair[];
      /** Providers whose detection also accepts its samples, with why: each must come after it in DETECTION_ORDER. */
      alsoClaimedBy?: Partial<Record<Provider, string>>;
      because?: never;
    }
  | { detectable: false; because: string; identifiedWith?: never; sends?: never; alsoClaimedBy?: never };

type Fixture = Detection & {
  /** For asymmetric schemes, instead of SECRET / OTHER_SECRET. */
  keys?: KeyPair;
  /** For schemes that read part of what they check from the body: the body as sent at `nowMs`, signed with `secret`. */
  body?: (at: { nowMs: number; secret: Uint8Array }) => Buffer;
};

const MAILGUN_TOKEN = "e0b5477167110d68991efc6b9f89f0a11066af27834600e123";

/** What the shared checks need to know about a provider beyond its scheme; none for most. */
const FIXTURES = {
  github: { sends: [["X-GitHub-Event", "push"], ["X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"]] },
  shopify: { sends: [["X-Shopify-Topic", "orders/create"], ["X-Shopify-Shop-Domain", "example.myshopify.com"]] },
  bitbucket: { identifiedWith: [["X-Event-Key", "repo:push"], ["X-Hook-UUID", "{d8d9e7b4-0b3c-4c1d-9a8e-3f2b1c0d9e8f}"]] },
  meta: {
    identifiedWith: [["User-Agent", "facebookexternalua"]],
    alsoClaimedBy: { github: "github claims any X-Hub-Signature-256; meta comes first and needs Meta's user agent without X-GitHub-Event" },
  },
  lemon_squeezy: { identifiedWith: [["X-Event-Name", "order_created"]] },
  intercom: { detectable: false, because: "X-Hub-Signature is also GitHub's (SHA-1) and Bitbucket's, and Intercom sends no header of its own" },
  clerk: { detectable: false, because: "its Svix headers are every Standard Webhooks sender's, which standard_webhooks detects" },
  resend: { detectable: false, because: "its Svix headers are every Standard Webhooks sender's, which standard_webhooks detects" },
  mailgun: {
    detectable: false,
    because: "its signature is inside the body and it sends no header of its own",
    // Mailgun's signature object: hex HMAC-SHA256 of timestamp + token with the signing key.
    body: ({ nowMs, secret }) => {
      const timestamp = String(Math.floor(nowMs / 1000));
      const signature = createHmac("sha256", secret).update(timestamp + MAILGUN_TOKEN).digest("hex");
      return Buffer.from(JSON.stringify({ signature: { timestamp, token: MAILGUN_TOKEN, signature }, "event-data": { event: "delivered" } }));
    },
  },
  // The freshness Linear signs is the body's webhookTimestamp (ms), not anything sign writes.
  linear: { body: ({ nowMs }) => Buffer.from(JSON.stringify({ type: "Issue", action: "create", webhookTimestamp: nowMs })) },
  discord: { keys: keyPair(ed25519Pair) },
  sendgrid: { keys: keyPair(p256Pair) },
} satisfies Partial<Record<Provider, Fixture>>;

const fixture = (provider: Provider): Fixture => (FIXTURES as Partial<Record<Provider, Fixture>>)[provider] ?? {};

const NOT_DETECTABLE = PROVIDER_NAMES.filter((provider) => fixture(provider).detectable === false);

/** A delivery as the provider makes it at `nowMs`: its body and the signature headers `sign` writes for it. */
function signed(provider: Provider, options: SignatureOptions = {}, nowMs = NOW_MS, headers: readonly HeaderPair[] = []) {
  const { keys, body: bodyAt } = fixture(provider);
  const secret = keys?.sign ?? SECRET;
  const body = bodyAt?.({ nowMs, secret }) ?? BODY;
  return { body, headers: providers[provider].sign({ secret, body, nowMs, headers, ...options }) };
}

const verified = (provider: Provider, { headers, body }: { headers: readonly HeaderPair[]; body: Uint8Array }, extra: object = {}): VerifyOutcome =>
  providers[provider].verify({ headers, body, secret: fixture(provider).keys?.verify ?? SECRET, nowMs: NOW_MS, ...extra });

const checksOf = (outcome: VerifyOutcome) => Object.fromEntries(outcome.checks.map(({ name, ok }) => [name, ok]));

/** What each provider sends: its fresh signature (in every header spelling it has) and its other headers. */
function samples(provider: Provider): HeaderPair[][] {
  const { identifiedWith = [], sends } = fixture(provider);
  const svix: HeaderPair[] = [["svix-id", "msg_1"], ["svix-timestamp", "1"], ["svix-signature", "v1,AA=="]];
  return [
    signed(provider).headers,
    signed(provider, ACME).headers,
    ...(provider === "standard_webhooks" ? [signed(provider, {}, NOW_MS, svix).headers] : []),
  ]
    .map((headers) => [...headers, ...identifiedWith])
    .concat(sends ? [sends] : []);
}

describe("the provider registry", () => {
  it.each(entries)("names %s by its key", (key, scheme) => {
    expect(scheme.name).toBe(key);
    expect(scheme.name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  it("lists PROVIDER_NAMES (and PROVIDERS) in registry order", () => {
    expect(PROVIDER_NAMES).toEqual(Object.keys(providers));
    expect(PROVIDERS).toBe(PROVIDER_NAMES);
    expect(Object.isFrozen(PROVIDER_NAMES)).toBe(true);
    // A non-empty tuple, as z.enum requires; this line fails to compile otherwise.
    const tuple: readonly [string, ...string[]] = PROVIDER_NAMES;
    expect(tuple.length).toBeGreaterThan(0);
  });

  it("detects in registry order, never generic", () => {
    expect(DETECTION_ORDER).toEqual(PROVIDER_NAMES.filter((name) => name !== "generic"));
    expect(DETECTION_ORDER).not.toContain("generic");
    expect(providers.generic.detect([["X-Signature", "00"]])).toBe(false);
  });

  it("hands out a scheme by name and refuses names outside the registry", () => {
    expect(providerScheme("slack")).toBe(providers.slack);
    expect(() => providerScheme("toString" as Provider)).toThrow(/unknown signature provider/);
  });
});

describe("detection", () => {
  const detectable = PROVIDER_NAMES.filter((provider) => !NOT_DETECTABLE.includes(provider));

  it.each(detectable)("%s's headers are claimed by no other provider", (provider) => {
    const { alsoClaimedBy = {} } = fixture(provider);
    for (const headers of samples(provider)) {
      for (const [other, scheme] of entries) {
        if (other === provider) continue;
        expect({ other, claimed: scheme.detect(headers) }).toEqual({ other, claimed: other in alsoClaimedBy });
      }
      expect(detectProvider(headers)).toBe(provider === "generic" ? undefined : provider);
    }
    for (const other of Object.keys(alsoClaimedBy) as Provider[]) expect(DETECTION_ORDER.indexOf(provider)).toBeLessThan(DETECTION_ORDER.indexOf(other));
  });

  it.each(PROVIDER_NAMES.filter((provider) => fixture(provider).identifiedWith))("%s's signature headers alone do not identify it", (provider) => {
    expect(providers[provider].detect(signed(provider).headers)).toBe(false);
  });

  it("lists exactly the providers that are never detected, each with its reason", () => {
    expect(NOT_DETECTABLE).toEqual(["intercom", "clerk", "resend", "mailgun"]);
    for (const provider of NOT_DETECTABLE) expect(fixture(provider).because).toMatch(/\S/);
  });

  it.each(NOT_DETECTABLE)("%s is never detected, not even from its own headers", (provider) => {
    for (const headers of samples(provider)) {
      expect(providers[provider].detect(headers)).toBe(false);
      expect(detectProvider(headers)).not.toBe(provider);
    }
  });
});

describe("each provider verifies its own signature", () => {
  it.each(PROVIDER_NAMES)("%s: signed now, verified now, every check passes", (provider) => {
    for (const options of [{}, ACME]) {
      const outcome = verified(provider, signed(provider, options), options);
      expect(outcome.verification).toBe("verified");
      expect(outcome.checks.length).toBeGreaterThanOrEqual(3);
      expect(outcome.checks.every((check) => check.ok)).toBe(true);
      expect("timestamp_fresh" in checksOf(outcome)).toBe(providers[provider].toleranceS !== undefined);
    }
  });

  it.each(PROVIDER_NAMES)("%s: a wrong secret is a signature_mismatch, and only the signature check fails", (provider) => {
    const outcome = verified(provider, signed(provider), { secret: fixture(provider).keys?.otherVerify ?? OTHER_SECRET });
    expect(outcome).toMatchObject({ verification: "failed", reason: "signature_mismatch" });
    expect(checksOf(outcome)).toMatchObject({ header_present: true, header_well_formed: true, signature_matches: false });
    expect(outcome.checks.filter((check) => !check.ok).map((check) => check.name)).toEqual(["signature_matches"]);
  });

  // BODY carries no signature object, so for mailgun too there is no signature at all.
  it.each(PROVIDER_NAMES)("%s: no headers is a missing_signature after one check", (provider) => {
    expect(verified(provider, { headers: [], body: BODY })).toEqual({ verification: "failed", reason: "missing_signature", checks: [{ name: "header_present", ok: false }] });
  });

  it.each(PROVIDER_NAMES)("%s: a signature older than the tolerance fails only the timestamp check", (provider) => {
    const { toleranceS } = providers[provider];
    const oldMs = NOW_MS - ((toleranceS ?? 86_400) + 1) * 1000;
    const outcome = verified(provider, signed(provider, {}, oldMs));
    if (toleranceS === undefined) {
      expect(outcome.verification).toBe("verified");
    } else {
      expect(outcome).toMatchObject({ verification: "failed", reason: "timestamp_out_of_tolerance" });
      expect(checksOf(outcome)).toEqual({ header_present: true, header_well_formed: true, signature_matches: true, timestamp_fresh: false });
    }
  });
});

describe("providerCatalog", () => {
  it("describes every provider, in registry order, as plain JSON", () => {
    const catalog = providerCatalog();
    expect(catalog.map((entry) => entry.name)).toEqual([...PROVIDER_NAMES]);
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
    for (const entry of catalog) {
      const scheme = providers[entry.name];
      expect(entry.label).not.toBe("");
      expect(entry.secretFormat.description).not.toBe("");
      expect(entry.signatureHeaders).toEqual(scheme.signatureHeaders);
      expect(entry.toleranceS).toBe(scheme.toleranceS);
      expect("toleranceS" in entry).toBe(scheme.toleranceS !== undefined);
    }
  });

  it("lists the headers each provider signs in, which re-signing replaces", () => {
    for (const { name, signatureHeaders } of providerCatalog()) {
      const replaced = providers[name].signedHeaderNames({});
      expect(signatureHeaders.map((h) => h.toLowerCase()).sort()).toEqual([...replaced].sort());
    }
  });

  it("hands out copies, so a caller cannot change the registry", () => {
    const [first] = providerCatalog();
    first!.signatureHeaders.push("X-Changed");
    first!.secretFormat.description = "changed";
    expect(providerCatalog()[0]).not.toEqual(first);
  });
});
