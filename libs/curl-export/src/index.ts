export { buildCurlCommand, isMaskedHeader, MASK } from "./curl.js";
export type { CurlInput, CurlOutput, HeaderPair } from "./curl.js";
export { shellQuote, shellQuoteBytes } from "./quote.js";
