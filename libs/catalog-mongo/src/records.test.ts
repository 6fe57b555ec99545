import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { Binary, BSON } from "mongodb";
import { Query, updateMany } from "mingo";
import { nextStamp } from "@whc/catalog-core";
import { endpointFixture, eventFixture, forwardAttemptFixture, keyHash, token } from "@whc/catalog-core/testing";
import { packRequest, seal, sealedText } from "@whc/sealing";
import { markReadFilter, SUMMARY_PROJECTION } from "./documents.js";
import { OUTBOX_FILTER } from "./delivery-documents.js";
import { API_KEY_ORDER, apiKeyListFilter, revokeFilter, touchFilter } from "./api-keys.js";
import { apiKeyDocs, attemptFromDoc, attemptToDoc, auditDocs, endpointDocs, eventFromDoc, eventToDoc, summaryDocs, type AnyDoc } from "./records.js";

const bin = (bytes: number[]) => new Binary(Buffer.from(bytes));

describe("MongoDB documents <-> records", () => {
  it("writes a new endpoint with zero counters, no times of its own and no empty secret", () => {
    const endpoint = endpointFixture("acct", {
      eventCount: 9,
      lastEventAt: 5,
      purgedEventCount: 3,
      sequenceCounter: 4,
      sealedSecret: new Uint8Array(),
      responseJson: '{"status":500}',
    });
    const {
      id,
      sealedSecret: _s,
      sealedPreviousSecret: _ps,
      secretRotatedAt: _r,
      eventCount: _e,
      lastEventAt: _l,
      lastPurgedAt: _p,
      purgedEventCount: _c,
      sequenceCounter: _n,
      ...rest
    } = endpoint;
    expect(endpointDocs.write(endpoint)).toStrictEqual({ _id: id, ...rest, eventCount: 0, purgedEventCount: 0, sequenceCounter: 0 });
    const sealed = endpointDocs.write({ ...endpoint, sealedSecret: new Uint8Array([7, 7]) });
    expect(sealed.sealedSecret).toEqual(bin([7, 7]));
    expect(endpointDocs.read(sealed)).toEqual({
      ...endpoint,
      sealedSecret: new Uint8Array([7, 7]),
      eventCount: 0,
      lastEventAt: undefined,
      purgedEventCount: 0,
      sequenceCounter: 0,
    });
  });

  it("reads an endpoint written before responses, rotation and sequences existed", () => {
    const {
      responseJson: _j,
      sequenceCounter: _n,
      sealedPreviousSecret: _p,
      secretRotatedAt: _r,
      ...old
    } = endpointDocs.write(endpointFixture("acct", { sealedSecret: new Uint8Array([1]) }));
    expect(old).not.toHaveProperty("responseJson");
    const read = endpointDocs.read(old as AnyDoc);
    expect(read).toMatchObject({ responseJson: "", sequenceCounter: 0, sealedPreviousSecret: undefined, secretRotatedAt: undefined });
    expect(read.sealedSecret).toEqual(new Uint8Array([1]));
  });

  it("writes an event's response code as given, leaving its sequence statuses out", () => {
    const s = nextStamp(undefined, Date.now());
    const doc = eventToDoc(eventFixture({ id: "ep", accountId: "acct" }, { responseCode: 200, sequenceStatuses: [500, 200] }), s, 500);
    expect(doc.responseCode).toBe(500);
    expect(doc).not.toHaveProperty("sequenceStatuses");
    expect(summaryDocs.read(doc).responseCode).toBe(500);
  });

  it("reads absent and null optional fields as undefined", () => {
    const doc = { ...endpointDocs.write(endpointFixture("acct")), lastEventAt: null, lastPurgedAt: 12 } as AnyDoc;
    const read = endpointDocs.read(doc);
    expect(read.lastEventAt).toBeUndefined();
    expect(read.lastPurgedAt).toBe(12);
    expect(read.sealedSecret).toBeUndefined();
  });

  it("writes a key without revokedAt, so that `revokedAt: { $exists: false }` finds it", () => {
    const key = { id: "k1", accountId: "a", accountName: "acme", name: "ci", prefix: "p", keyHash: keyHash("k"), scopes: ["events:read"], endpointIds: ["e1"], createdAt: 1 };
    const doc = apiKeyDocs.write({ ...key, expiresAt: undefined, lastUsedAt: undefined, revokedAt: undefined });
    const { id: _id, ...stored } = key;
    expect(doc).toStrictEqual({ _id: "k1", ...stored, keyHash: new Binary(Buffer.from(keyHash("k"))) });
    expect(new Query({ revokedAt: { $exists: false } }).find([doc]).all()).toHaveLength(1);
    const read = apiKeyDocs.read(doc);
    expect(read).toEqual({ ...key, keyHash: read.keyHash, expiresAt: undefined, lastUsedAt: undefined, revokedAt: undefined });
    expect(Buffer.from(read.keyHash).equals(keyHash("k"))).toBe(true);
  });

  it("reads a key stored before scopes as holding every scope on every endpoint, unnamed", () => {
    const old = { _id: "k0", accountId: "a", accountName: "acme", prefix: "p", keyHash: new Binary(Buffer.from(keyHash("k"))), createdAt: 1 };
    expect(apiKeyDocs.read(old)).toMatchObject({ name: "", scopes: ["*"], endpointIds: [], expiresAt: undefined, lastUsedAt: undefined });
  });

  it("selects keys by account, revokes once within the account, and touches lastUsedAt only past the interval", () => {
    const docs = [
      { _id: "k1", accountId: "a", accountName: "acme", createdAt: 2 },
      { _id: "k2", accountId: "a", accountName: "acme", createdAt: 1, lastUsedAt: 50 },
      { _id: "k3", accountId: "b", accountName: "other", createdAt: 1, revokedAt: 9 },
    ];
    const ids = (filter: Record<string, unknown>) => new Query(filter).find(docs).sort(API_KEY_ORDER).all().map((d) => (d as { _id: string })._id);
    expect(ids(apiKeyListFilter({ accountId: "a" }))).toEqual(["k2", "k1"]);
    expect(ids(apiKeyListFilter({ accountName: "other" }))).toEqual(["k3"]);
    expect(ids(apiKeyListFilter({}))).toHaveLength(3);
    expect(ids(revokeFilter("k1", "b"))).toEqual([]);
    expect(ids(revokeFilter("k1", "a"))).toEqual(["k1"]);
    expect(ids(revokeFilter("k3"))).toEqual([]);
    expect(ids(touchFilter("k1", 40))).toEqual(["k1"]);
    expect(ids(touchFilter("k2", 40))).toEqual([]);
    expect(ids(touchFilter("k2", 50))).toEqual(["k2"]);
  });

  it("writes an event as the list, the detail and the search read it; readAt absent until read", () => {
    const s = nextStamp(undefined, Date.now());
    const e = eventFixture({ id: "ep", accountId: "acct" }, { words: ["red", "red", "blue"] });
    const doc = eventToDoc(e, s);
    expect(doc).toStrictEqual({
      _id: s.id,
      endpointId: "ep",
      accountId: "acct",
      receivedAt: s.receivedAt,
      method: e.method,
      path: e.path,
      headers: e.headers.map(([n, v]) => [n, v]),
      remoteIp: e.remoteIp,
      canonicalEventType: e.canonicalEventType,
      provider: e.provider,
      verification: e.verification,
      verificationFailureReason: e.verificationFailureReason,
      responseCode: e.responseCode,
      truncated: e.truncated,
      originalSizeBytes: e.originalSizeBytes,
      bodyStored: true,
      body: { ciphertext: bin([1, 2, 3, 0, 255]), wrappedKey: bin([9, 9]) },
      keyId: "k1",
      tokens: [new Binary(Buffer.from(token("red"))), new Binary(Buffer.from(token("blue")))],
      diagnosticJson: "{}",
      forwardedResponseJson: "{}",
    });
    const { searchTokens: _t, ...stored } = e;
    // Nothing redacted: no field in the document, and "" read back; counts are kept as given.
    expect(eventFromDoc(doc)).toEqual({ ...stored, id: s.id, receivedAt: s.receivedAt, readAt: undefined, redactionsJson: "", deliveries: [] });
    const counts = '{"headers":1,"jsonPaths":0,"patterns":2}';
    const redacted = eventToDoc({ ...e, redactionsJson: counts }, s);
    expect(redacted.redactionsJson).toBe(counts);
    expect(eventFromDoc(redacted).redactionsJson).toBe(counts);
    expect(summaryDocs.read(doc)).toMatchObject({ id: s.id, bodyStored: true, keyId: "k1", readAt: undefined });

    const docs = [doc];
    expect(updateMany(docs, markReadFilter("acct", "ep", s.id), { $set: { readAt: 7 } } as never).modifiedCount).toBe(1);
    expect(eventFromDoc(docs[0] as AnyDoc).readAt).toBe(7);
  });

  it("writes a relay capture's deliveries into the outbox due at once, a proxy capture's outside it, a capture without any", () => {
    const s = nextStamp(undefined, Date.now());
    const endpoint = { id: "ep", accountId: "acct" };
    const deliveries = [
      { destinationId: "d-a", target: "https://a.example.test/" },
      { destinationId: "d-b", target: "https://b.example.test/" },
    ];
    const relay = eventToDoc(eventFixture(endpoint, { forward: { scheduled: true, deliveries } }), s);
    const pending = (destinationId: string, target: string, nextAttemptAt: number | null, started = 0) => ({
      destinationId,
      state: "pending",
      target,
      nextAttemptAt,
      claimOwner: null,
      claimUntil: null,
      started,
      spared: 0,
      attempts: [],
    });
    expect(relay.deliveries).toStrictEqual([pending("d-a", "https://a.example.test/", s.receivedAt), pending("d-b", "https://b.example.test/", s.receivedAt)]);
    expect(relay).toMatchObject({ forwardState: "pending", outboxAt: s.receivedAt });
    expect(eventFromDoc(relay).deliveries).toEqual(deliveries.map((d) => ({ ...d, state: "pending", nextAttemptAt: s.receivedAt, attempts: [] })));
    expect(summaryDocs.read(relay).forwardState).toBe("pending");
    const proxy = eventToDoc(eventFixture(endpoint, { forward: { scheduled: false, deliveries: deliveries.slice(0, 1) } }), s);
    // The proxy's attempt 1 is begun by the append (ADR 0098).
    expect(proxy.deliveries).toStrictEqual([pending("d-a", "https://a.example.test/", null, 1)]);
    expect(proxy).toMatchObject({ forwardState: "pending", outboxAt: null });
    expect(new Query(OUTBOX_FILTER).find([relay, proxy]).all()).toEqual([relay]);
    const plain = eventToDoc(eventFixture(endpoint), s);
    expect(plain).not.toHaveProperty("deliveries");
    expect(plain).not.toHaveProperty("forwardState");
    expect(eventFromDoc(plain).deliveries).toEqual([]);
    expect(summaryDocs.read(plain).forwardState).toBeUndefined();
  });

  it("writes a forward attempt with its sealed body as binaries, and reads it back", () => {
    const attempt = forwardAttemptFixture(2);
    const doc = attemptToDoc(attempt);
    expect(doc.body).toEqual({ ciphertext: bin([0, 1, 2, 255, 2]), wrappedKey: bin([8, 8]), keyId: "k2" });
    expect(doc.headers).toEqual(attempt.headers.map(([n, v]) => [n, v]));
    expect(attemptFromDoc(doc)).toEqual(attempt);
    const bare = forwardAttemptFixture(3, { body: undefined, status: 0, error: "timeout" });
    expect(attemptToDoc(bare)).not.toHaveProperty("body");
    expect(attemptFromDoc(attemptToDoc(bare))).toEqual(bare);
  });

  it("writes a metadata-only event without body, key or tokens", () => {
    const s = nextStamp(undefined, Date.now());
    const doc = eventToDoc(eventFixture({ id: "ep", accountId: "acct" }, { body: undefined }), s);
    expect(doc.bodyStored).toBe(false);
    for (const field of ["body", "keyId", "tokens", "readAt"]) expect(doc).not.toHaveProperty(field);
    expect(eventFromDoc(doc).body).toBeUndefined();
  });

  it("writes a sealed capture with no header, sub-path or query in clear, and its data key once; reads old clear ones as before", () => {
    const s = nextStamp(undefined, Date.now());
    const key = randomBytes(32);
    const request = packRequest({ path: "/in/MarkerSubpath?token=MarkerQuery", headers: [["Authorization", "Bearer MarkerBearer"]] });
    const wrapped = { wrappedKey: new Uint8Array([6, 6]), keyId: "k3" };
    const sealedRequest = { ...wrapped, ciphertext: seal(key, request) };
    const target = sealedText(seal(key, Buffer.from("https://t.example.test/in/MarkerSubpath?token=MarkerQuery")));
    // As ingest appends them: headers and path only inside the sealed request.
    const sealed = (body: boolean) =>
      eventFixture(
        { id: "ep", accountId: "acct" },
        {
          headers: [],
          path: "",
          sealedRequest,
          body: body ? { ...wrapped, ciphertext: seal(key, Buffer.from("{}")) } : undefined,
          forward: { scheduled: true, deliveries: [{ destinationId: "d-a", target }] },
        },
      );
    for (const doc of [eventToDoc(sealed(true), s), eventToDoc(sealed(false), s)]) {
      const bytes = Buffer.from(BSON.serialize(doc));
      for (const marker of ["MarkerBearer", "MarkerQuery", "MarkerSubpath"]) expect(bytes.includes(Buffer.from(marker)), marker).toBe(false);
      expect(doc).toMatchObject({ path: "", headers: [], keyId: "k3", request: { ciphertext: new Binary(Buffer.from(sealedRequest.ciphertext)) } });
      // The wrapped key is stored once: the body's, or the request's when there is no body.
      if (doc.body) expect(doc.request).not.toHaveProperty("wrappedKey");
      else expect(doc.request.wrappedKey).toEqual(bin([6, 6]));
      const read = eventFromDoc(doc);
      expect(read.sealedRequest?.keyId).toBe("k3");
      expect(Buffer.from(read.sealedRequest!.ciphertext).equals(sealedRequest.ciphertext)).toBe(true);
      expect([...read.sealedRequest!.wrappedKey]).toEqual([6, 6]);
      expect(read.deliveries[0]?.target).toBe(target);
      // A list never carries it.
      const [listed] = new Query({}).find([doc], SUMMARY_PROJECTION).all();
      expect(listed).not.toHaveProperty("request");
      expect(listed).not.toHaveProperty("headers");
    }
    const old = eventToDoc(eventFixture({ id: "ep", accountId: "acct" }, { path: "/old?x=1" }), s);
    expect(old).not.toHaveProperty("request");
    expect(eventFromDoc(old)).toMatchObject({ path: "/old?x=1", headers: [["Content-Type", "application/json"], ["X-Repeat", "one"], ["X-Repeat", "two"]], sealedRequest: undefined });
  });

  it("writes an audit entry under its id", () => {
    const audit = {
      id: "au1",
      accountId: "a",
      endpointId: "e",
      eventId: "v",
      keyId: "k",
      targetUrl: "https://example.test/hook",
      mode: "exact",
      result: "delivered",
      targetStatus: 200,
      networkFailureReason: "",
      durationMs: 12,
      createdAt: 1,
      requestId: "r",
      client: "api",
    };
    const { id, ...rest } = audit;
    expect(auditDocs.write(audit)).toStrictEqual({ _id: id, ...rest });
  });
});
