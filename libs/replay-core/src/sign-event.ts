import type { ServiceImpl } from "@connectrpc/connect";
import type { ReplayService } from "@whc/contracts";
import { AppError, validationFailed } from "@whc/errors";
import { openCapture } from "@whc/sealing";
import { signHeaders, signatureHeaderNames } from "@whc/signatures";
import type { ForwardDeps } from "./forward-attempt.js";
import { asProvider } from "./outbound.js";

type SignHandlers = Pick<ServiceImpl<typeof ReplayService>, "signEvent">;

/**
 * SignEvent (design §19; ADR 0060): the provider's signature headers for an event's stored
 * bytes, made now, as replay's resign mode makes them, with the endpoint's own secret (opened
 * here by the crypto service and dropped with the call) or the caller's `target_secret`. The
 * endpoint's replay flag for the client applies: a fresh signature is what a replay needs, and
 * `replayFromApi: false` means no replay from the API. One catalog call (LoadDelivery: the
 * event and the endpoint with its sealed secret), then crypto's OpenSecret and, for a data key
 * not cached, UnwrapDataKey.
 */
export function createSignHandler(deps: Pick<ForwardDeps, "catalog" | "crypto" | "opener" | "now">): SignHandlers {
  const now = deps.now ?? Date.now;
  return {
    async signEvent(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      const { endpoint, event: stored } = await deps.catalog.loadDelivery({ accountId: req.accountId, endpointId: req.endpointId, eventId: req.eventId });
      const client = req.client === "dashboard" ? "dashboard" : "api";
      if (!(client === "dashboard" ? endpoint!.replayFromDashboard : endpoint!.replayFromApi)) throw new AppError("replay_disabled", `replay from ${client} disabled`);
      const secret = req.targetSecret
        ? Buffer.from(req.targetSecret, "utf8")
        : endpoint!.sealedSecret.length > 0
          ? (await deps.crypto.openSecret({ sealed: endpoint!.sealedSecret })).plaintext
          : undefined;
      if (!secret) throw validationFailed("target_secret", "required", "the endpoint has no secret and none was given");

      const { event, body, decryption, requestReadable } = await openCapture(deps.opener, stored!);
      // What is signed is what a replay sends: the stored bytes. None stored (metadata only) or
      // unreadable ones: there is nothing the signature could be for.
      const bodyReadable = decryption === "ok" || (decryption === "metadata_only" && Number(event.originalSizeBytes) === 0);
      if (!bodyReadable || !requestReadable) throw new AppError("conflict", "the event's body or request cannot be read");

      const provider = asProvider(event.provider);
      const signedAt = now();
      const generic = { genericSignatureHeader: endpoint!.genericSignatureHeader || undefined, genericSignaturePrefix: endpoint!.genericSignaturePrefix || undefined };
      const headers = signHeaders({
        provider,
        secret,
        body: body ?? new Uint8Array(),
        nowMs: signedAt,
        url: req.targetUrl || `${req.captureBaseUrl}${event.path}`,
        headers: event.headers.map((h) => [h.name, h.value] as [string, string]),
        ...generic,
      });
      // Ed25519 and ECDSA schemes (Discord, SendGrid) sign only with a private key; the
      // endpoint verifies with the public one.
      if (headers.length === 0) throw new AppError("signing_unsupported", `${provider} cannot sign with this secret`);
      return {
        headers: headers.map(([name, value]) => ({ name, value })),
        replaces: signatureHeaderNames(provider, generic.genericSignatureHeader),
        provider,
        signedAtMs: BigInt(signedAt),
      };
    },
  };
}
