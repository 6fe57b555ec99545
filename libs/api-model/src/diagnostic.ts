import { z } from "zod";
import { BODY_KINDS, CHECK_NAMES, HANDSHAKE_NAMES, LIKELY_CAUSES, MATCHED_SECRETS, RESPONSE_SOURCES, VERIFICATIONS } from "./values.js";

/**
 * An event's `diagnostic` (design §12): what ingest learned of a capture. The one definition:
 * ingest builds it through these types (`DiagnosticJson`), the OpenAPI document describes it,
 * the dashboard reads it (`readDiagnostic`, checked against this schema). Objects stay open to
 * fields added later; events stored before a field existed lack it, so readers treat every
 * field as optional (`diagnostic`), while ingest writes the required ones (`signatureDiagnostic`).
 */

export const signatureCheck = z.object({ name: z.enum(CHECK_NAMES), ok: z.boolean() });

/** The `signature` object: the provider's scheme judged, and, when it failed, the likely cause. */
export const signatureDiagnostic = z.looseObject({
  provider: z.string().describe("The scheme that judged the signature (design §12's provider names)."),
  header: z.string().describe("The header the scheme reads the signature from."),
  verdict: z.enum(VERIFICATIONS),
  likelyCause: z.enum(LIKELY_CAUSES),
  explanation: z.string().describe("One sentence a person can act on."),
  skewSeconds: z.number().optional().describe("Timed schemes: now minus the signed time at capture; positive when the signature is old."),
  toleranceSeconds: z.number().optional().describe("Timed schemes: how old a signature the provider accepts."),
  matchedSecret: z.enum(MATCHED_SECRETS).describe("previous: verified by the secret before the last rotation, within its grace."),
  checks: z.array(signatureCheck),
});
export type SignatureDiagnosticJson = z.infer<typeof signatureDiagnostic>;

export const contentTypeDiagnostic = z.looseObject({
  declared: z.string().nullable().describe("The declared media type, lower-cased, without parameters; null when none was sent."),
  bodyIs: z.enum(BODY_KINDS),
  mismatch: z.boolean().describe("The declared type promises JSON, a form or text and the body is something else."),
});

export type ContentTypeDiagnosticJson = z.infer<typeof contentTypeDiagnostic>;

/** What ingest writes for every capture it stores. */
export const diagnosticWritten = z.looseObject({
  bodySha256: z.string().describe("Hex SHA-256 of the bytes received."),
  contentType: contentTypeDiagnostic,
  signature: signatureDiagnostic,
  handshake: z.enum(HANDSHAKE_NAMES).optional().describe("The provider handshake the capture was answered as (design §10)."),
  responseSource: z.enum(RESPONSE_SOURCES).describe("Why the sender got the answer it got (design §10, §11)."),
});
export type DiagnosticJson = z.infer<typeof diagnosticWritten>;

/** The /v1 field: as written, every part optional for events stored before it existed. */
export const diagnostic = z
  .looseObject({
    ...diagnosticWritten.shape,
    bodySha256: diagnosticWritten.shape.bodySha256.optional(),
    contentType: contentTypeDiagnostic.partial().optional(),
    signature: signatureDiagnostic.partial().optional(),
    responseSource: diagnosticWritten.shape.responseSource.optional(),
  })
  .describe("What ingest learned of the capture (design §12): body hash, content type, signature verdict and likely cause, handshake, why it was answered as it was.");
export type DiagnosticView = z.infer<typeof diagnostic>;
