import { describe, it, expect } from "vitest";
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { CryptoService, EventSchema, ForwardSchema, type Event } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient } from "@whc/rpc";
import {
  createEnvelopeOpener,
  createEnvelopeSealer,
  openCapture,
  packRequest,
  sealedText,
  sealedTextBytes,
  sealUrlFor,
  sealedWithBody,
  type SealedBodyParts,
} from "@whc/sealing";
import { createKeyRing } from "./key-ring.js";
import { createCryptoService } from "./service.js";

/**
 * A capture's body, request and forward URLs sealed by ingest's sealer and opened by a reader's
 * opener (ADR 0009), against this crypto service: what the catalog stores is what they exchange.
 */

const ENDPOINT = "0194a0b0-0000-7000-8000-000000000001";

/** A crypto service with its own key ring, an ingest-side sealer and a reader-side opener. */
function keys(masterKeys = [{ id: "k1", key: randomBytes(32) }]) {
  const ring = createKeyRing(masterKeys, randomBytes(32));
  const transport = createInMemoryTransport((r) => r.service(CryptoService, createCryptoService(ring)), createLogger("test", "silent"), 5000);
  const crypto = createServiceClient(CryptoService, transport);
  return {
    sealer: createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1000 }),
    opener: createEnvelopeOpener(crypto, { maxAgeMs: 60_000, maxEntries: 10 }),
  };
}

const sealedBody = (p: SealedBodyParts) => ({ $typeName: "webhookcapture.catalog.v1.SealedBody" as const, ...p });

/** A stored event as the catalog answers it for a capture sealed by `sealer`. */
async function storedEvent(sealer: ReturnType<typeof keys>["sealer"], request: { path: string; headers: [string, string][] }, body?: string, target?: string): Promise<Event> {
  const sealed = await sealer.sealCapture(ENDPOINT, {
    request: packRequest(request),
    body: body === undefined ? undefined : Buffer.from(body),
    forwardTargets: target === undefined ? [] : [target],
  });
  return create(EventSchema, {
    endpointId: ENDPOINT,
    method: "POST",
    bodyStored: body !== undefined,
    ...(sealed.body ? { body: sealedBody(sealed.body) } : {}),
    sealedRequest: sealedBody(sealed.request),
    ...(sealed.forwardTargets[0] ? { forward: create(ForwardSchema, { state: "pending", target: sealed.forwardTargets[0] }) } : {}),
    deliveries: sealed.forwardTargets.map((t) => create(ForwardSchema, { destinationId: "d", state: "pending", target: t })),
  });
}

describe("a capture sealed under one data key", () => {
  it("opens its body, headers, sub-path, query and forward target; none of them is in the stored bytes", async () => {
    const { sealer, opener } = keys();
    const request = { path: "/sub/Secret3?token=Secret2", headers: [["Authorization", "Bearer Secret1"], ["X-A", "1"], ["x-a", "2"]] as [string, string][] };
    const stored = await storedEvent(sealer, request, '{"ok":true}', "https://example.com/app/sub/Secret3?token=Secret2");
    expect(Buffer.from(stored.body!.wrappedKey).equals(Buffer.from(stored.sealedRequest!.wrappedKey))).toBe(true);
    expect(stored.body!.keyId).toBe(stored.sealedRequest!.keyId);
    const atRest = Buffer.concat([stored.body!.ciphertext, stored.sealedRequest!.ciphertext, Buffer.from(stored.forward!.target)]).toString("latin1");
    for (const secret of ["Secret1", "Secret2", "Secret3"]) expect(atRest).not.toContain(secret);

    const opened = await openCapture(opener, stored);
    expect(opened.decryption).toBe("ok");
    expect(opened.requestReadable).toBe(true);
    expect(Buffer.from(opened.body!).toString()).toBe('{"ok":true}');
    expect(opened.event.path).toBe(request.path);
    expect(opened.event.headers.map((h) => [h.name, h.value])).toEqual(request.headers);
    expect(opened.event.forward?.target).toBe("https://example.com/app/sub/Secret3?token=Secret2");
    // The request is sealed inside the body's ciphertext (ADR 0092): one AES-GCM operation.
    expect(sealedWithBody(stored.sealedRequest!.ciphertext)).toBe(true);
  });

  it("opens a body too large to be joined in one buffer, with its request, byte for byte", async () => {
    const { sealer, opener } = keys();
    const body = randomBytes(300 * 1024).toString("base64");
    const stored = await storedEvent(sealer, { path: "?big=1", headers: [["content-type", "text/plain"]] }, body);
    const opened = await openCapture(opener, stored);
    expect([opened.decryption, opened.requestReadable, opened.event.path]).toEqual(["ok", true, "?big=1"]);
    expect(Buffer.from(opened.body!).toString()).toBe(body);
  });

  it("reads a capture sealed by an earlier version, its request and body each alone (ADR 0009)", async () => {
    const { sealer, opener } = keys();
    const body = await sealer.seal(ENDPOINT, Buffer.from('{"old":true}'));
    const request = await opener.sealUnder(ENDPOINT, body, packRequest({ path: "/old?q=Secret", headers: [["X-Old", "1"]] }), "request");
    const old = create(EventSchema, { endpointId: ENDPOINT, bodyStored: true, body: sealedBody(body), sealedRequest: sealedBody({ ...body, ciphertext: request! }) });
    const opened = await openCapture(opener, old);
    expect([opened.decryption, opened.requestReadable, opened.event.path, Buffer.from(opened.body!).toString()]).toEqual(["ok", true, "/old?q=Secret", '{"old":true}']);
    expect(opened.event.headers.map((h) => [h.name, h.value])).toEqual([["X-Old", "1"]]);
  });

  it("reads a joined capture whose ciphertext was altered, or whose body is missing, as failed", async () => {
    const { sealer, opener } = keys();
    const stored = await storedEvent(sealer, { path: "/p", headers: [["a", "b"]] }, "body");
    const altered = Buffer.from(stored.body!.ciphertext);
    altered[20] = (altered[20] as number) ^ 1;
    const tampered = await openCapture(opener, { ...stored, body: { ...stored.body!, ciphertext: altered } });
    expect([tampered.decryption, tampered.requestReadable, tampered.event.path, tampered.body]).toEqual(["failed", false, "", undefined]);
    const bodiless = await openCapture(opener, { ...stored, body: undefined });
    expect([bodiless.decryption, bodiless.requestReadable]).toEqual(["failed", false]);
  });

  it("seals the request of a metadata-only capture too; its decryption stays metadata_only", async () => {
    const { sealer, opener } = keys();
    const stored = await storedEvent(sealer, { path: "?token=Secret2", headers: [["authorization", "Basic Secret1"]] });
    expect(stored.body).toBeUndefined();
    const opened = await openCapture(opener, stored);
    expect([opened.decryption, opened.event.path, opened.event.headers[0]?.value]).toEqual(["metadata_only", "?token=Secret2", "Basic Secret1"]);
  });

  it("reads an event stored before requests were sealed as it was stored", async () => {
    const { opener } = keys();
    const old = create(EventSchema, { endpointId: ENDPOINT, path: "/old?x=1", headers: [{ name: "a", value: "b" }], forward: { state: "delivered", target: "https://example.com/old?x=1", attempts: [{ n: 1, url: "https://example.com/old?x=1" }] } });
    const opened = await openCapture(opener, old);
    expect([opened.decryption, opened.requestReadable, opened.event.path, opened.event.forward?.attempts[0]?.url]).toEqual(["metadata_only", true, "/old?x=1", "https://example.com/old?x=1"]);
    expect(opened.event.headers.map((h) => [h.name, h.value])).toEqual([["a", "b"]]);
    // Nothing of its own to seal a URL under: it stays as clear as the event's path.
    expect(await sealUrlFor(opener, old, "https://example.com/old?x=1")).toBe("https://example.com/old?x=1");
  });

  it("reads as failed, never throws, when its key left the ring or a ciphertext was moved or altered", async () => {
    const k1 = { id: "k1", key: randomBytes(32) };
    const k2 = { id: "k2", key: randomBytes(32) };
    const before = keys([k1]);
    const stored = await storedEvent(before.sealer, { path: "/p", headers: [["a", "b"]] }, "body");

    // k1 gone: body and request unreadable, the event still reads.
    const rotated = keys([k2]);
    const gone = await openCapture(rotated.opener, stored);
    expect([gone.decryption, gone.requestReadable, gone.event.path, gone.event.headers, gone.body]).toEqual(["failed", false, "", [], undefined]);

    // The request's ciphertext where the body's was, and the other way round: the AAD says no.
    const swapped: Event = { ...stored, body: { ...stored.body!, ciphertext: stored.sealedRequest!.ciphertext }, sealedRequest: { ...stored.sealedRequest!, ciphertext: stored.body!.ciphertext } };
    const moved = await openCapture(before.opener, swapped);
    expect([moved.decryption, moved.requestReadable]).toEqual(["failed", false]);

    // Another endpoint's: refused too.
    const elsewhere = await openCapture(before.opener, { ...stored, endpointId: "0194a0b0-0000-7000-8000-000000000002" });
    expect(elsewhere.decryption).toBe("failed");
  });
});

describe("forward URLs sealed under their capture's key", () => {
  it("seals an attempt's URL so that openCapture gives it back, and leaves sealed or foreign texts as they are", async () => {
    const { sealer, opener } = keys();
    const stored = await storedEvent(sealer, { path: "/x?token=Secret2", headers: [] }, "b", "https://example.com/x?token=Secret2");
    const url = "http://127.0.0.1:9/x?token=Secret2";
    const sealed = await sealUrlFor(opener, stored, url);
    expect(sealed).not.toContain("Secret2");
    expect(sealedTextBytes(sealed)).toBeDefined();
    expect(await sealUrlFor(opener, stored, sealed)).toBe(sealed);

    const withAttempts: Event = { ...stored, forward: create(ForwardSchema, { state: "pending", target: stored.forward!.target, attempts: [{ n: 1, url: sealed }, { n: 2, url: "https://plain.example/" }] }) };
    const opened = await openCapture(opener, withAttempts);
    expect(opened.event.forward?.attempts.map((a) => a.url)).toEqual([url, "https://plain.example/"]);
    // A sealed text that does not open (not ours, or altered) reads as empty, not as an error.
    const altered: Event = { ...withAttempts, forward: create(ForwardSchema, { state: "failed", target: sealedText(randomBytes(40)) }) };
    expect((await openCapture(opener, altered)).event.forward?.target).toBe("");
  });
});
