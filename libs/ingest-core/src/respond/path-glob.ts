/**
 * A rule's `path` against a capture's sub-path (design §10). Segments are compared as received
 * (no percent-decoding: what the dashboard shows is what a rule is written against). A segment
 * that is exactly `*` stands for one non-empty segment; `**` for any number of segments,
 * none included. Anything else, `ord_*` too, is literal. A trailing slash is a segment of its
 * own (empty), so `/orders` and `/orders/` are different paths, as they are to most servers.
 */

/** The sub-path without its query; the webhookUrl itself ("" or "?a=1") is "/". */
export function subPathOf(path: string): string {
  const at = path.indexOf("?");
  const bare = at < 0 ? path : path.slice(0, at);
  return bare === "" ? "/" : bare;
}

function segmentsOf(path: string): string[] {
  return path.split("/").slice(1);
}

/**
 * Whether `pattern` matches the sub-path of `path`. Dynamic programming over the two segment
 * lists, so several `**` cost O(n·m), never the exponential time of naive backtracking.
 */
export function pathMatches(pattern: string, path: string): boolean {
  const want = segmentsOf(pattern);
  const have = segmentsOf(subPathOf(path));
  // reach[j]: the first i pattern segments can match the first j path segments.
  let reach: boolean[] = have.map(() => false).concat(false);
  reach[0] = true;
  for (const segment of want) {
    const next: boolean[] = new Array<boolean>(have.length + 1).fill(false);
    for (let j = 0; j <= have.length; j += 1) {
      if (segment === "**") next[j] = (reach[j] ?? false) || (j > 0 && (next[j - 1] ?? false));
      else if (j > 0 && reach[j - 1]) next[j] = segmentMatches(segment, have[j - 1] as string);
    }
    reach = next;
  }
  return reach[have.length] ?? false;
}

function segmentMatches(pattern: string, segment: string): boolean {
  return pattern === "*" ? segment !== "" : pattern === segment;
}
