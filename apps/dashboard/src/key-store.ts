const KEY_STORAGE = "whc.apiKey";

/** The API key the user pasted in: this tab's session storage only, never a URL. */
export const keyStore = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};
