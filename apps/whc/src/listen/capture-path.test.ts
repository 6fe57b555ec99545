import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { shellQuote } from "@whc/curl-export";
import { unquoteWord } from "./capture-path.js";

describe("reading a URL back from the cURL export", () => {
  it("undoes the export's quoting of any URL, in plain and ANSI-C quotes", () => {
    const latin1 = fc.string({ unit: fc.integer({ min: 1, max: 255 }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(latin1, (path) => {
        const url = `http://127.0.0.1:9/h/e${path}`;
        const command = `curl --globoff --path-as-is -X 'POST' ${shellQuote(url)} -H 'A: b'`;
        const start = command.indexOf(shellQuote(url));
        expect(unquoteWord(command, start)).toBe(url);
      }),
    );
  });

  it("reads nothing where no word begins, or where one does not end", () => {
    expect(unquoteWord("curl -X POST", 5)).toBeUndefined();
    expect(unquoteWord("curl 'http://x", 5)).toBeUndefined();
    expect(unquoteWord("curl $'http://x\\q'", 5)).toBeUndefined();
  });
});
