import { ApiError, createApiClient } from "@whc/api-model";

/** How long a dashboard session's key works (ADR 0052); signing out revokes it sooner. */
export const SESSION_HOURS = 12;

export interface Session {
  /** The key the tab uses from now on. */
  key: string;
  /** The session key's id when one was opened; absent when the pasted key is used as it is. */
  id?: string;
}

/**
 * The dashboard's session (design §14, ADR 0052): the pasted key opens a key of its own with
 * scope `dashboard`, expiring, which is the one kept in the tab; replays through it follow the
 * endpoint's `replayFromDashboard`. A key that may not open one (without `keys:write`, without
 * `dashboard` or `*`, or restricted to endpoints: 403) is used as it is, and its replays follow
 * `replayFromApi`; so is a key whose account holds all the usable keys its quota allows (429
 * `quota_exceeded`, quota `keys`, ADR 0054): the dashboard still opens, where its keys page can
 * revoke some. Any other failure (401: an unknown key) is the caller's to show.
 */
export async function openSession(pasted: string, now = Date.now()): Promise<Session> {
  const client = createApiClient({ baseUrl: "", apiKey: pasted });
  try {
    const created = await client.keys.create({
      name: "dashboard session",
      scopes: ["dashboard"],
      expiresAt: new Date(now + SESSION_HOURS * 3_600_000).toISOString(),
    });
    return { key: created.key, id: created.id };
  } catch (err) {
    if (ApiError.is(err) && (err.status === 403 || (err.status === 429 && err.details.quota === "keys"))) return { key: pasted };
    throw err;
  }
}

/** Sign-out: the session's key is revoked (best effort: it expires anyway). */
export async function closeSession(key: string, id: string): Promise<void> {
  await createApiClient({ baseUrl: "", apiKey: key })
    .keys.revoke(id)
    .catch(() => undefined);
}
