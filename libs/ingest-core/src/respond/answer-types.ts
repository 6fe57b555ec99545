/**
 * An answer ready to send: what the sender is told once its capture is durably stored.
 * Framing (Content-Length, Transfer-Encoding, Connection) is the server's to add, never here.
 */
export interface RenderedAnswer {
  status: number;
  /** Names as configured (any case), values safe to hand to Node's writeHead as they are. */
  headers: [string, string][];
  body: Uint8Array;
  /** How long to wait after the durable commit before answering (design §10). */
  delayMs: number;
}

/**
 * A text's UTF-8 bytes, in Node's pool (Buffer.from), not in an array of their own as
 * TextEncoder makes it: the built-in answer is made for every capture. A plain Uint8Array on
 * them, as TextEncoder's was.
 */
export function utf8(text: string): Uint8Array {
  const bytes = Buffer.from(text, "utf8");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The JSON answers ingest sends carry exactly this Content-Type, as `reply()` in answer.ts does. */
export const JSON_CONTENT_TYPE = "application/json";
export const TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

export function jsonAnswer(status: number, value: unknown, headers: [string, string][] = []): RenderedAnswer {
  return { status, headers: [["content-type", JSON_CONTENT_TYPE], ...headers], body: utf8(JSON.stringify(value)), delayMs: 0 };
}

/**
 * A plain-text answer. `nosniff` because a text answer here may echo what the sender chose:
 * a browser must not be talked into reading it as HTML from our origin.
 */
export function textAnswer(status: number, text: string): RenderedAnswer {
  return {
    status,
    headers: [
      ["content-type", TEXT_CONTENT_TYPE],
      ["x-content-type-options", "nosniff"],
    ],
    body: utf8(text),
    delayMs: 0,
  };
}
