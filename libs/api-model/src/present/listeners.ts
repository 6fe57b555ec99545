import type { Listener, SignEventResponse } from "@whc/contracts";
import type { EventSignatureJson, ListenerJson } from "../index.js";
import { isoTime } from "./json.js";

/** A listener as the catalog keeps it (design §19), as `GET .../listeners` shows it. */
export function listenerJson(l: Listener): ListenerJson {
  return {
    id: l.id,
    host: l.host,
    startedAt: isoTime(l.startedAtMs),
    lastSeenAt: isoTime(l.lastSeenAtMs),
    cursor: l.cursorAtMs === undefined ? null : { at: isoTime(l.cursorAtMs), id: l.cursorId },
    lagEvents: l.lagEvents,
    lastError: l.lastError || null,
    stalled: l.stalled,
  };
}

/** Replay's SignEvent answer as `POST .../signature` answers it. */
export function eventSignatureJson(s: SignEventResponse): EventSignatureJson {
  return {
    headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])),
    replaces: s.replaces,
    provider: s.provider,
    signedAt: isoTime(s.signedAtMs),
  };
}
