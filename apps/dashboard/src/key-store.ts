const KEY_STORAGE = "whc.apiKey";
const SESSION_STORAGE = "whc.sessionKeyId";

/**
 * The key this tab uses: the dashboard session's key it opened (ADR 0052), or the pasted key
 * when that key may not open one. This tab's session storage only, never a URL.
 */
export const keyStore = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  /** The id of the session key this tab opened, to revoke it on sign-out; null for a pasted key used as it is. */
  sessionKeyId: (): string | null => sessionStorage.getItem(SESSION_STORAGE),
  set: (key: string, sessionKeyId?: string) => {
    sessionStorage.setItem(KEY_STORAGE, key);
    if (sessionKeyId) sessionStorage.setItem(SESSION_STORAGE, sessionKeyId);
    else sessionStorage.removeItem(SESSION_STORAGE);
  },
  clear: () => {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(SESSION_STORAGE);
  },
};
