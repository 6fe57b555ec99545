import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Query, updateMany, updateOne } from "mingo";
import { applyEndpointPatch, forwardPrecondition, meetsForwardPrecondition, sequenceStatus, type EndpointPatch, type EndpointRecord } from "@whc/catalog-core";
import { endpointFixture } from "@whc/catalog-core/testing";
import { endpointOfAccount, endpointPatchUpdate, forwardPreconditionFilter, rejectionsUpdate, sequenceStart, sequenceTakeUpdate, type Doc } from "./documents.js";
import { endpointDocs, type AnyDoc } from "./records.js";

const NOW = 1_800_000_000_000;
const secret = (b: number) => new Uint8Array([b, b, b]);

/** An endpoint as stored after some life: a secret rotated once, a response, sequence at 5. */
function stored(overrides: Partial<EndpointRecord> = {}): AnyDoc {
  const record = endpointFixture("acct", {
    sealedSecret: secret(2),
    sealedPreviousSecret: secret(1),
    secretRotatedAt: 1000,
    responseJson: '{"sequence":[{"status":500},{"status":200}]}',
    forwardJson: '{"url":"https://app.example.test/hooks"}',
    sealedTargetSecret: secret(6),
    sealedDestinationSecrets: secret(13),
    inboundJson: '{"methods":["POST"]}',
    sealedInbound: secret(9),
    rejectedCount: 4,
    redactJson: '{"headers":["authorization"]}',
    dedupeJson: '{"windowSeconds":3600,"key":"auto"}',
    ...overrides,
  });
  return { ...endpointDocs.write(record), sequenceCounter: 5, eventCount: 3 };
}

/** The patch applied by mingo to a copy of `doc`, read back as a record. */
function applied(doc: AnyDoc, patch: EndpointPatch, accountId = "acct"): EndpointRecord {
  const docs: Doc[] = [{ ...doc }];
  updateMany(docs, endpointOfAccount(accountId, doc._id), endpointPatchUpdate(patch, NOW) as never);
  return endpointDocs.read(docs[0] as AnyDoc);
}

/** What catalog-core says the patch does (the SQLite store writes exactly this). */
const reference = (doc: AnyDoc, patch: EndpointPatch) => applyEndpointPatch(endpointDocs.read(doc), patch, NOW);

describe("MongoDB endpoint update documents, evaluated by mingo", () => {
  const cases: [string, EndpointPatch][] = [
    ["nothing but updatedAt", {}],
    ["displayName", { displayName: "Renamed" }],
    ["status", { status: "paused" }],
    ["operatingMode", { operatingMode: "metadata_only" }],
    ["replayFromDashboard", { replayFromDashboard: false }],
    ["replayFromApi", { replayFromApi: false }],
    ["provider", { provider: "stripe" }],
    ["genericSignatureHeader", { genericSignatureHeader: "X-Sig" }],
    ["genericSignaturePrefix", { genericSignaturePrefix: "sha256=" }],
    ["responseJson", { responseJson: '{"status":202}' }],
    ["responseJson removed", { responseJson: "" }],
    ["a value that looks like a field path", { displayName: "$slug", responseJson: "$$REMOVE" }],
    ["rotation", { sealedSecret: secret(3) }],
    ["clear", { clearSecret: true }],
    ["clear and a new secret", { clearSecret: true, sealedSecret: secret(4) }],
    ["resetSequence", { resetSequence: true }],
    ["several at once", { displayName: "x", status: "paused", sealedSecret: secret(5), resetSequence: true }],
    ["forwardJson", { operatingMode: "relay", forwardJson: '{"url":"https://b.example.test/"}' }],
    ["forwardJson removed, with its target secret", { forwardJson: "" }],
    ["forwardJson removed, a target secret given with it", { forwardJson: "", sealedTargetSecret: secret(7) }],
    ["target secret", { sealedTargetSecret: secret(7) }],
    ["target secret cleared", { clearTargetSecret: true }],
    ["target secret cleared and a new one", { clearTargetSecret: true, sealedTargetSecret: secret(8) }],
    ["a forward that looks like a field path", { forwardJson: "$forwardJson" }],
    [
      "destinations with their sealed secrets, the old target secret cleared",
      { forwardJson: '[{"id":"0190a000-0000-7000-8000-00000000000a","name":"a","url":"https://a.example.test/"}]', sealedDestinationSecrets: secret(14), clearTargetSecret: true },
    ],
    ["destination secrets removed", { sealedDestinationSecrets: new Uint8Array() }],
    ["destinations removed, secrets given with them", { forwardJson: "", sealedDestinationSecrets: secret(15) }],
    ["inbound replaced with its sealed secrets", { inboundJson: '{"allowIps":["203.0.113.0/24"]}', sealedInbound: secret(10) }],
    ["inbound removed, with its sealed secrets", { inboundJson: "" }],
    ["inbound removed, sealed secrets given with it", { inboundJson: "", sealedInbound: secret(11) }],
    ["an inbound that looks like a field path", { inboundJson: "$inboundJson", sealedInbound: secret(12) }],
    ["redactJson", { redactJson: '{"jsonPaths":["$.card.number"]}' }],
    ["redactJson removed", { redactJson: "" }],
    ["dedupeJson", { dedupeJson: '{"windowSeconds":600,"fields":["body.id"]}' }],
    ["dedupeJson removed", { dedupeJson: "" }],
    ["a dedupeJson that looks like a field path", { dedupeJson: "$dedupeJson" }],
  ];

  it.each(cases)("%s: gives what applyEndpointPatch gives", (_name, patch) => {
    const doc = stored();
    expect(applied(doc, patch)).toEqual(reference(doc, patch));
  });

  it("adds refused requests to rejectedCount, from 0 on a document written before the field existed", () => {
    // A new endpoint's document has no rejectedCount either: the store never takes it from a record.
    const docs: Doc[] = [stored(), { ...stored(), rejectedCount: 4 }];
    for (const d of docs) updateOne([d], { _id: d._id }, rejectionsUpdate(3) as never);
    expect(docs.map((d) => endpointDocs.read(d as AnyDoc).rejectedCount)).toEqual([3, 7]);
    expect(endpointDocs.read(docs[0] as AnyDoc).inboundJson).toBe('{"methods":["POST"]}');
  });

  it("rotates: the current secret becomes the previous one, the rotation time moves", () => {
    const after = applied(stored(), { sealedSecret: secret(3) });
    expect(after.sealedSecret).toEqual(secret(3));
    expect(after.sealedPreviousSecret).toEqual(secret(2));
    expect(after.secretRotatedAt).toBe(NOW);
    expect(after.updatedAt).toBe(NOW);
    expect(after.sequenceCounter).toBe(5);
  });

  it("sets a first secret without inventing a previous one", () => {
    const doc = stored({ sealedSecret: undefined, sealedPreviousSecret: undefined, secretRotatedAt: undefined });
    const after = applied(doc, { sealedSecret: secret(3) });
    expect(after.sealedSecret).toEqual(secret(3));
    expect(after.sealedPreviousSecret).toBeUndefined();
    expect(after).toEqual(reference(doc, { sealedSecret: secret(3) }));
  });

  it("removes the target secret with the forward settings, leaving the field absent", () => {
    for (const patch of [{ forwardJson: "" }, { clearTargetSecret: true }]) {
      const docs: Doc[] = [stored()];
      updateMany(docs, endpointOfAccount("acct", docs[0]!._id as string), endpointPatchUpdate(patch, NOW) as never);
      expect(docs[0], JSON.stringify(patch)).not.toHaveProperty("sealedTargetSecret");
      expect(docs[0]).toHaveProperty("sealedSecret");
    }
  });

  it("clears the secret, the previous one and the rotation time, leaving the fields absent", () => {
    const docs: Doc[] = [stored()];
    updateMany(docs, endpointOfAccount("acct", docs[0]!._id as string), endpointPatchUpdate({ clearSecret: true }, NOW) as never);
    for (const field of ["sealedSecret", "sealedPreviousSecret", "secretRotatedAt"]) expect(docs[0]).not.toHaveProperty(field);
    expect(docs[0]).toMatchObject({ updatedAt: NOW, sequenceCounter: 5 });
  });

  it("resets the sequence and leaves the other counters alone", () => {
    const after = applied(stored(), { resetSequence: true });
    expect(after.sequenceCounter).toBe(0);
    expect(after.eventCount).toBe(3);
  });

  it("changes nothing of another account's endpoint", () => {
    const doc = stored();
    const docs: Doc[] = [{ ...doc }];
    expect(new Query(endpointOfAccount("other", doc._id)).find(docs).all()).toHaveLength(0);
    const res = updateMany(docs, endpointOfAccount("other", doc._id), endpointPatchUpdate({ displayName: "x", clearSecret: true }, NOW) as never);
    expect(res.modifiedCount).toBe(0);
    expect(docs[0]).toEqual(doc);
  });

  it("agrees with applyEndpointPatch on any patch", () => {
    const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("$slug", "$$REMOVE", ""));
    const patch = fc.record(
      {
        displayName: text,
        status: fc.constantFrom("active", "paused"),
        operatingMode: fc.constantFrom("capture", "metadata_only"),
        replayFromDashboard: fc.boolean(),
        replayFromApi: fc.boolean(),
        provider: text,
        genericSignatureHeader: text,
        genericSignaturePrefix: text,
        sealedSecret: fc.uint8Array({ minLength: 1, maxLength: 4 }),
        clearSecret: fc.boolean(),
        responseJson: text,
        resetSequence: fc.boolean(),
        forwardJson: text,
        sealedTargetSecret: fc.uint8Array({ minLength: 1, maxLength: 4 }),
        clearTargetSecret: fc.boolean(),
        sealedDestinationSecrets: fc.uint8Array({ minLength: 0, maxLength: 4 }),
        dedupeJson: text,
      },
      { requiredKeys: [] },
    );
    const current = fc.record({ hasSecret: fc.boolean(), hasPrevious: fc.boolean(), hasTargetSecret: fc.boolean(), hasDestinationSecrets: fc.boolean() });
    fc.assert(
      fc.property(patch, current, (p, c) => {
        const doc = stored({
          sealedSecret: c.hasSecret ? secret(2) : undefined,
          sealedPreviousSecret: c.hasPrevious ? secret(1) : undefined,
          secretRotatedAt: c.hasPrevious ? 1000 : undefined,
          sealedTargetSecret: c.hasTargetSecret ? secret(6) : undefined,
          sealedDestinationSecrets: c.hasDestinationSecrets ? secret(13) : undefined,
        });
        expect(applied(doc, p)).toEqual(reference(doc, p));
      }),
      { numRuns: 300 },
    );
  });
});

describe("MongoDB response sequence documents, evaluated by mingo", () => {
  it("takes one position: the counter moves from n to n + 1 and n picks the status", () => {
    const statuses = [500, 500, 200];
    const docs: Doc[] = [{ _id: "ep" }]; // written before sequences existed: no counter yet
    const codes: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      const before = { ...docs[0]! };
      updateMany(docs, { _id: "ep" }, sequenceTakeUpdate(1) as never);
      const n = sequenceStart(before);
      expect(n).toBe(i);
      expect(docs[0]!.sequenceCounter).toBe(n + 1);
      codes.push(sequenceStatus(statuses, n));
    }
    expect(codes).toEqual([500, 500, 200, 500, 500, 200, 500]);
  });

  it("takes a batch's positions at once, from where the counter stood", () => {
    const docs: Doc[] = [{ _id: "ep", sequenceCounter: 4 }];
    const before = { ...docs[0]! };
    updateMany(docs, { _id: "ep" }, sequenceTakeUpdate(3) as never);
    expect(sequenceStart(before)).toBe(4);
    expect(docs[0]!.sequenceCounter).toBe(7);
    expect([4, 5, 6].map((n) => sequenceStatus([500, 500, 200], n))).toEqual([500, 200, 500]);
  });

  it("restarts at 0 after a reset", () => {
    const docs: Doc[] = [{ _id: "ep", accountId: "acct", sequenceCounter: 9 }];
    updateMany(docs, endpointOfAccount("acct", "ep"), endpointPatchUpdate({ resetSequence: true }, NOW) as never);
    const before = { ...docs[0]! };
    updateMany(docs, { _id: "ep" }, sequenceTakeUpdate(1) as never);
    expect(sequenceStart(before)).toBe(0);
    expect(docs[0]!.sequenceCounter).toBe(1);
  });
});

describe("MongoDB forward rule in the update filter, evaluated by mingo", () => {
  it("refuses in the filter exactly the patches catalog-core refuses: no relay or proxy endpoint without forward settings", () => {
    const mode = fc.constantFrom("capture", "metadata_only", "relay", "proxy");
    const forwardJson = fc.constantFrom("", '{"url":"https://b.example.test/"}');
    fc.assert(
      fc.property(mode, forwardJson, fc.option(mode, { nil: undefined }), fc.option(forwardJson, { nil: undefined }), (storedMode, storedJson, operatingMode, patchJson) => {
        const doc = stored({ operatingMode: storedMode, forwardJson: storedJson });
        const patch: EndpointPatch = { ...(operatingMode === undefined ? {} : { operatingMode }), ...(patchJson === undefined ? {} : { forwardJson: patchJson }) };
        const pre = forwardPrecondition(patch);
        const guard = forwardPreconditionFilter(pre);
        const matches = guard !== undefined && new Query({ ...endpointOfAccount("acct", doc._id), ...guard }).find([doc]).all().length === 1;
        expect(matches).toBe(meetsForwardPrecondition(endpointDocs.read(doc), pre));
        // A patch touching the mode or the settings that applies leaves a forwarding endpoint with settings.
        if (matches && (operatingMode !== undefined || patchJson !== undefined)) {
          const after = reference(doc, patch);
          expect(["relay", "proxy"].includes(after.operatingMode) && after.forwardJson === "").toBe(false);
        }
      }),
    );
  });
});

