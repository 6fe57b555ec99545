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
import { NOW_MS } from "./test-support.js";

/** A whsec_ secret, so that Standard Webhooks signs with its decoded key and the others with its bytes. */
const SECRET = Buffer.from("whsec_cmVnaXN0cnkgcm91bmQgdHJpcCBrZXkgMDEyMzQ1Njc4OQ==");
const OTHER_SECRET = Buffer.from("whsec_YW5vdGhlciBrZXksIG5vdCB0aGUgb25lIHRoYXQgc2lnbmVk");
const BODY = Buffer.from('{"type":"registry.checked","id":"evt_1"}');
const ACME: SignatureOptions = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };

const entries = Object.entries(providers) as [Provider, (typeof providers)[Provider]][];

const signed = (provider: Provider, options: SignatureOptions = {}, nowMs = NOW_MS, headers: readonly HeaderPair[] = []) =>
  providers[provider].sign({ secret: SECRET, body: BODY, nowMs, headers, ...options });

const verified = (provider: Provider, headers: readonly HeaderPair[], extra: object = {}): VerifyOutcome =>
  providers[provider].verify({ headers, body: BODY, secret: SECRET, nowMs: NOW_MS, ...extra });

const checksOf = (outcome: VerifyOutcome) => Object.fromEntries(outcome.checks.map(({ name, ok }) => [name, ok]));

/** Headers each provider sends besides its signature, where it has some only it sends. */
const EXTRA_HEADERS: Partial<Record<Provider, HeaderPair[]>> = {
  github: [["X-GitHub-Event", "push"], ["X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"]],
  shopify: [["X-Shopify-Topic", "orders/create"], ["X-Shopify-Shop-Domain", "example.myshopify.com"]],
};

/** What each provider sends: its fresh signature (in every header spelling it has) and its other headers. */
function samples(provider: Provider): HeaderPair[][] {
  const svix: HeaderPair[] = [["svix-id", "msg_1"], ["svix-timestamp", "1"], ["svix-signature", "v1,AA=="]];
  return [
    signed(provider),
    signed(provider, ACME),
    ...(provider === "standard_webhooks" ? [signed(provider, {}, NOW_MS, svix)] : []),
    ...(EXTRA_HEADERS[provider] ? [EXTRA_HEADERS[provider]] : []),
  ];
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

  it("detects in today's order, never generic", () => {
    expect(DETECTION_ORDER).toEqual(["stripe", "github", "slack", "shopify", "standard_webhooks"]);
    expect(providers.generic.detect([["X-Signature", "00"]])).toBe(false);
  });

  it("hands out a scheme by name and refuses names outside the registry", () => {
    expect(providerScheme("slack")).toBe(providers.slack);
    expect(() => providerScheme("toString" as Provider)).toThrow(/unknown signature provider/);
  });
});

describe("detection", () => {
  it.each(PROVIDER_NAMES)("%s's headers are claimed by no other provider", (provider) => {
    for (const headers of samples(provider)) {
      for (const [other, scheme] of entries) if (other !== provider) expect({ other, claimed: scheme.detect(headers) }).toEqual({ other, claimed: false });
      expect(detectProvider(headers)).toBe(provider === "generic" ? undefined : provider);
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
    const outcome = verified(provider, signed(provider), { secret: OTHER_SECRET });
    expect(outcome).toMatchObject({ verification: "failed", reason: "signature_mismatch" });
    expect(checksOf(outcome)).toMatchObject({ header_present: true, header_well_formed: true, signature_matches: false });
    expect(outcome.checks.filter((check) => !check.ok).map((check) => check.name)).toEqual(["signature_matches"]);
  });

  it.each(PROVIDER_NAMES)("%s: no headers is a missing_signature after one check", (provider) => {
    expect(verified(provider, [])).toEqual({ verification: "failed", reason: "missing_signature", checks: [{ name: "header_present", ok: false }] });
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
