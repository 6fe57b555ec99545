import { SCHEMA_LIMITS, SHAPE_COMPLETE, SHAPE_LETTERS_OF_MASK, SHAPE_PARTIAL, TYPE_BIT, type BodyShape } from "@whc/api-model";

/**
 * The shape of a JSON body (design §19; ADR 0090): its paths and the JSON types at each, never
 * a value, read in one pass over its bytes. JSON.parse of the benchmark's 1.5 KB event alone
 * cost more than this whole walk (docs/performance.md, "Schema learning"): it builds every
 * value, where a shape needs none.
 *
 * Only a JSON object is learned. The work per body is bounded whatever the sender makes of it:
 * bodies over SCHEMA_LIMITS.bodyBytes are not read at all; below SCHEMA_LIMITS.depth values are
 * stepped over, not looked into; past SCHEMA_LIMITS.values values, arrayItems elements of an
 * array, pathsPerType paths or a path of pathLength characters, the shape is partial. Bytes
 * that are not JSON give no shape (strings are not checked for escapes or control characters:
 * only the structure matters here).
 */
export type ShapeLimits = Record<"bodyBytes" | "depth" | "values" | "arrayItems" | "pathLength" | "pathsPerType", number>;

const OBJECT = TYPE_BIT.object;
const ARRAY = TYPE_BIT.array;
const STRING = TYPE_BIT.string;
const INTEGER = TYPE_BIT.integer;
const NUMBER = TYPE_BIT.number;
const BOOLEAN = TYPE_BIT.boolean;
const NULL = TYPE_BIT.null;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");
const NULL_WORD = Buffer.from("null");

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Bytes that may occur in a JSON number. */
function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** Not JSON: the walk gives up and the body is not learned. */
class NotJson extends Error {}
const notJson = new NotJson();

/**
 * A key as a path segment: a name stays, anything that looks like data (a key made of an id, a
 * date, an address: the body used an object as a map) becomes `*`, so that no value reaches
 * the catalog in clear as a path (ADR 0091), and one map does not fill a schema's paths.
 */
const ASCII_NAME = /^[A-Za-z_$@][A-Za-z0-9_$@:-]{0,63}$/;
const NAME = /^[\p{L}_$@][\p{L}\p{N}_$@:-]{0,63}$/u;

function looksLikeName(key: string): boolean {
  if (!ASCII_NAME.test(key) && !NAME.test(key)) return false;
  let digits = 0;
  for (let i = 0; i < key.length; i += 1) {
    const c = key.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits += 1;
  }
  // Field names carry a digit or three (`address_line1`, `sha256`); ids and hashes carry more.
  return digits < 4 && (digits === 0 || key.length < 20);
}

/** The segment of every key that is no name. */
const ANY_KEY = "*";

/** Keys repeat from one capture to the next: each is judged once (bounded). */
const segments = new Map<string, string>();
const MAX_SEGMENTS = 4096;

export function segmentOf(key: string): string {
  let s = segments.get(key);
  if (s === undefined) {
    s = looksLikeName(key) ? key : ANY_KEY;
    if (segments.size >= MAX_SEGMENTS) segments.clear();
    segments.set(key, s);
  }
  return s;
}

/**
 * A path met in a body: its children by key (an array's elements are its child `[]`), and, for
 * the walk that last met it (`walk`), its types. The paths outlive the walks: bodies of one
 * sender repeat their keys, so a path's node, its text and its parent's map of keys are made
 * once, when it is first met, and every later walk only marks it (a walk made them all afresh,
 * a fifth of what a capture allocated). Keys that look like data lead to their parent's `*`.
 */
interface PathNode {
  path: string;
  mask: number;
  walk: number;
  children: Map<string, PathNode> | undefined;
  elements: PathNode | undefined;
  /**
   * The members met the last time an object at this path was read, in body order, by their key
   * as written (plain keys only): the next object of the same sender mostly has the same keys in
   * the same order, and a key that matches its place here is neither cut out nor looked up.
   */
  order: Member[] | undefined;
}

/** Members remembered in a path's order: a webhook's objects have tens. */
const MAX_ORDER = 256;

interface Member {
  /** The key's bytes as the body wrote them. */
  raw: Uint8Array;
  node: PathNode;
}

const pathNode = (path: string): PathNode => ({ path, mask: 0, walk: 0, children: undefined, elements: undefined, order: undefined });

/** Where values go whose path is not kept (over a limit): noted nowhere. */
const NOWHERE: PathNode = pathNode("");

/**
 * The paths met so far, from the body's object. Bounded: past MAX_KNOWN nodes, keys and places
 * in their orders, the next walk starts a new tree (bodies that use objects as maps bring a new
 * key each time).
 */
let known = pathNode("");
let knownSize = 0;
const MAX_KNOWN = 20_000;
let walks = 0;

/** Keys a walk decodes one by one before it decodes the body whole. */
const DECODED_ALONE = 32;

/**
 * One walk over a body. A single one serves every body (a walk runs to its end before the next
 * starts), its stacks kept from body to body: a walk allocates nothing unless it meets a key
 * new at its place.
 */
class Walk {
  /** Every path kept, in the order first met. */
  readonly nodes: PathNode[] = [];
  partial = false;
  private values = 0;
  // The open containers (`depth` of them, the innermost last): their kind, their node, and how
  // many elements an array has had.
  private depth = 0;
  private readonly kinds: number[] = [];
  private readonly bases: PathNode[] = [];
  private readonly items: number[] = [];
  /** For each open object, how many members it has had: the place of the next in its path's order. */
  private readonly members: number[] = [];
  private root: PathNode = known;
  /** This walk's mark on the nodes it met. */
  private id = 0;
  /** Whether the last string stringEnd stepped over held an escape. */
  private escaped = false;
  /** Keys this walk decoded, and past DECODED_ALONE of them the body decoded whole (keyAt). */
  private decoded = 0;
  private latin1: string | undefined = undefined;
  /** The body's bytes: undefined past its end, which no test below matches. */
  private b: Buffer = Buffer.alloc(0);
  private limits: ShapeLimits = SCHEMA_LIMITS;

  /** Ready for a new body. */
  reset(b: Buffer, limits: ShapeLimits): this {
    if (knownSize > MAX_KNOWN) {
      known = pathNode("");
      knownSize = 0;
    }
    this.b = b;
    this.limits = limits;
    this.nodes.length = 0;
    this.partial = false;
    this.values = 0;
    this.depth = 0;
    this.root = known;
    this.id = walks += 1;
    this.escaped = false;
    this.decoded = 0;
    this.latin1 = undefined;
    return this;
  }

  /** The index after the body's object, or the walk ends early (partial) and answers -1. */
  run(start: number): number {
    const b = this.b;
    let i = this.space(start);
    if (b[i] !== LBRACE) throw notJson;
    this.open(OBJECT, this.root);
    i = this.space(i + 1);
    if (b[i] === RBRACE) {
      this.pop();
      return i + 1;
    }
    for (;;) {
      const depth = this.depth;
      let node: PathNode;
      if (this.kinds[depth - 1] === OBJECT) {
        // The key its place had last time, compared where it lies (quote included) before the
        // string is stepped over at all: most keys of a sender's next body are those.
        const expected = this.expectedAt(depth - 1);
        let keyEnd: number;
        if (expected !== undefined && b[i] === QUOTE && this.spells(expected.raw, i + 1, i + 1 + expected.raw.length) && b[i + 1 + expected.raw.length] === QUOTE) {
          keyEnd = i + 1 + expected.raw.length;
          this.members[depth - 1] = this.members[depth - 1]! + 1;
          node = this.kept(expected.node);
        } else {
          keyEnd = this.stringEnd(i);
          node = this.memberAt(depth - 1, i + 1, keyEnd);
        }
        i = this.space(keyEnd + 1);
        if (b[i] !== COLON) throw notJson;
        i = this.space(i + 1);
      } else {
        const n = (this.items[depth - 1] = this.items[depth - 1]! + 1);
        if (n > this.limits.arrayItems) {
          this.partial = true;
          i = this.skipToClose(i, RBRACKET);
          this.pop();
          const after = this.afterValue(this.space(i + 1));
          if (after < 0) return -after;
          i = after;
          continue;
        }
        node = this.element(this.bases[depth - 1]!);
      }
      if (++this.values > this.limits.values) {
        this.partial = true;
        return -1;
      }
      i = this.value(i, node, depth);
      if (i < 0) {
        // A container was opened: its first member, or its end at once.
        i = this.space(-i);
        const top = this.kinds[this.depth - 1];
        if ((top === OBJECT && b[i] !== RBRACE) || (top === ARRAY && b[i] !== RBRACKET)) continue;
        i += 1;
        this.pop();
      }
      const after = this.afterValue(this.space(i));
      if (after < 0) return -after;
      i = after;
    }
  }

  /**
   * After a member: `,` leads to the next one (its index returned), a closing bracket closes
   * containers for as long as they end; the body's object closing answers minus its end.
   */
  private afterValue(start: number): number {
    const b = this.b;
    let i = start;
    for (;;) {
      const c = b[i];
      const top = this.kinds[this.depth - 1];
      if (c === COMMA) return this.space(i + 1);
      if ((top === OBJECT && c === RBRACE) || (top === ARRAY && c === RBRACKET)) {
        this.pop();
        if (this.depth === 0) return -(i + 1);
        i = this.space(i + 1);
        continue;
      }
      throw notJson;
    }
  }

  private open(kind: number, base: PathNode): void {
    const d = this.depth;
    this.kinds[d] = kind;
    this.bases[d] = base;
    this.items[d] = 0;
    this.members[d] = 0;
    this.depth = d + 1;
  }

  private pop(): void {
    this.depth -= 1;
  }

  /** The member the object open at `level` had at its next place last time (undefined: none known). */
  private expectedAt(level: number): Member | undefined {
    const parent = this.bases[level]!;
    return parent === NOWHERE ? undefined : parent.order?.[this.members[level]!];
  }

  /**
   * The member whose key lies between `start` and `end` of the object open at `level`, a key
   * other than the one its place had last time (run() takes that one where it lies): member()'s,
   * and the order takes it at that place.
   */
  private memberAt(level: number, start: number, end: number): PathNode {
    const parent = this.bases[level]!;
    const at = this.members[level]!;
    this.members[level] = at + 1;
    if (parent === NOWHERE) return NOWHERE;
    const escaped = this.escaped;
    const key = this.keyAt(start, end);
    const node = this.member(parent, key);
    // A key as written (no escape, not replaced by ANY_KEY for its length), among an object's
    // first MAX_ORDER: a map of thousands of keys is not kept. Each place taken counts towards
    // the tree's bound (MAX_KNOWN), as its nodes and keys do.
    if (node !== NOWHERE && !escaped && key !== ANY_KEY && at < MAX_ORDER) {
      const order = (parent.order ??= []);
      if (order[at] === undefined) knownSize += 1;
      order[at] = { raw: Uint8Array.prototype.slice.call(this.b, start, end), node };
    }
    return node;
  }

  /**
   * The member of `parent` under `key` (raw, as the body has it), kept if it is within the
   * limits; else NOWHERE. Keys that look like data share one `*` member.
   */
  private member(parent: PathNode, key: string): PathNode {
    if (parent === NOWHERE) return NOWHERE;
    const children = (parent.children ??= new Map());
    let node = children.get(key);
    if (node === undefined) {
      // Once this walk's paths are full, a key new to the tree is not even judged.
      if (this.nodes.length >= this.limits.pathsPerType) {
        this.partial = true;
        return NOWHERE;
      }
      const seg = segmentOf(key);
      node = seg === key ? undefined : children.get(seg);
      if (node === undefined) {
        node = pathNode(parent === this.root ? seg : `${parent.path}.${seg}`);
        children.set(seg, node);
        knownSize += 1;
      }
      if (seg !== key) {
        children.set(key, node);
        knownSize += 1;
      }
    }
    return this.kept(node);
  }

  /** The elements of the array at `parent`: its `[]` path. */
  private element(parent: PathNode): PathNode {
    if (parent === NOWHERE) return NOWHERE;
    if (parent.elements === undefined) {
      parent.elements = pathNode(`${parent.path}[]`);
      knownSize += 1;
    }
    return this.kept(parent.elements);
  }

  /**
   * A path as this walk meets it: the first time, kept (its types from none) within the limits
   * of paths and path length; else NOWHERE (the shape is partial).
   */
  private kept(node: PathNode): PathNode {
    if (node.walk === this.id) return node;
    if (node.path.length > this.limits.pathLength || this.nodes.length >= this.limits.pathsPerType) {
      this.partial = true;
      return NOWHERE;
    }
    node.walk = this.id;
    node.mask = 0;
    this.nodes.push(node);
    return node;
  }

  /**
   * One value at `node`, `depth` containers deep: a scalar answers the index after it; an
   * object or array looked into is opened and answers minus the index after its bracket.
   */
  private value(i: number, node: PathNode, depth: number): number {
    const c = this.b[i];
    if (c === QUOTE) {
      node.mask |= STRING;
      return this.stringEnd(i) + 1;
    }
    if (c === LBRACE || c === LBRACKET) {
      const kind = c === LBRACE ? OBJECT : ARRAY;
      node.mask |= kind;
      if (depth >= this.limits.depth) return this.skipToClose(i + 1, c === LBRACE ? RBRACE : RBRACKET) + 1;
      this.open(kind, node);
      return -(i + 1);
    }
    if (c === 0x74) return this.literal(i, TRUE, node, BOOLEAN);
    if (c === 0x66) return this.literal(i, FALSE, node, BOOLEAN);
    if (c === 0x6e) return this.literal(i, NULL_WORD, node, NULL);
    if (c !== undefined && (c === 0x2d || (c >= 0x30 && c <= 0x39))) return this.number(i, node);
    throw notJson;
  }

  private literal(i: number, word: Uint8Array, node: PathNode, bit: number): number {
    if (!this.spells(word, i, i + word.length)) throw notJson;
    node.mask |= bit;
    return i + word.length;
  }

  /** Whether the body's bytes from `start` to `end` are `word`'s. */
  private spells(word: Uint8Array, start: number, end: number): boolean {
    if (word.length !== end - start || end > this.b.length) return false;
    const b = this.b;
    for (let k = 0; k < word.length; k += 1) if (b[start + k] !== word[k]) return false;
    return true;
  }

  private number(start: number, node: PathNode): number {
    const b = this.b;
    let i = start;
    let fraction = false;
    for (let c = b[i]; c !== undefined && isNumberByte(c); c = b[++i]) {
      if (c === 0x2e || c === 0x65 || c === 0x45) fraction = true;
    }
    let bit = INTEGER;
    if (fraction) {
      // 1.0 and 1e3 are integers, as JSON.parse reads them and as JSON Schema counts them.
      const n = Number(b.toString("latin1", start, i));
      if (Number.isNaN(n)) throw notJson;
      bit = Number.isInteger(n) ? INTEGER : NUMBER;
    } else if (i === start + 1 && b[start] === 0x2d) {
      throw notJson;
    }
    node.mask |= bit;
    return i;
  }

  /** The index of the quote that ends the string opening at `i`; `escaped` says whether it holds an escape. */
  private stringEnd(i: number): number {
    const b = this.b;
    if (b[i] !== QUOTE) throw notJson;
    const n = b.length;
    let escaped = false;
    for (let at = i + 1; at < n; at += 1) {
      const c = b[at];
      if (c === QUOTE) {
        this.escaped = escaped;
        return at;
      }
      if (c === BACKSLASH) {
        escaped = true;
        at += 1;
      }
    }
    throw notJson;
  }

  /** The key between `start` and `end`, decoded as JSON.parse decodes it. */
  private keyAt(start: number, end: number): string {
    const b = this.b;
    // Longer than any name (64 characters, each at most two escapes): never decoded.
    if (end - start > 12 * 64) return ANY_KEY;
    if (!this.escaped) {
      for (let k = start; k < end; k += 1) if (b[k]! >= 0x80) return b.toString("utf8", start, end);
      // ASCII, which latin1 decodes as UTF-8 does. A body of thousands of keys new to their
      // places would decode each through Node's binding (70 ns a key): past a few, the body
      // is decoded once (one character per byte, so its offsets are the bytes') and sliced.
      this.decoded += 1;
      if (this.decoded > DECODED_ALONE) return (this.latin1 ??= b.toString("latin1")).slice(start, end);
      return b.toString("latin1", start, end);
    }
    try {
      return JSON.parse(b.toString("utf8", start - 1, end + 1)) as string;
    } catch {
      throw notJson;
    }
  }

  /** From inside a container, the index of the bracket that closes it (strings stepped over). */
  private skipToClose(start: number, closing: number): number {
    const b = this.b;
    let depth = 1;
    for (let i = start; i < b.length; i += 1) {
      const c = b[i];
      if (c === QUOTE) i = this.stringEnd(i);
      else if (c === LBRACE || c === LBRACKET) depth += 1;
      else if (c === RBRACE || c === RBRACKET) {
        depth -= 1;
        if (depth === 0) {
          if (c !== closing) throw notJson;
          return i;
        }
      }
    }
    throw notJson;
  }

  private space(i: number): number {
    const b = this.b;
    for (let c = b[i]; c !== undefined && isSpace(c); c = b[++i]);
    return i;
  }
}

const theWalk = new Walk();
const SPACES = Buffer.alloc(4096, " ");

/** The walk of a body, or undefined when it is not a JSON object (or too large to read). */
function walkOf(body: Uint8Array, limits: ShapeLimits): Walk | undefined {
  if (body.length === 0 || body.length > limits.bodyBytes) return undefined;
  // The bytes themselves, never decoded whole: JSON's structure is ASCII, a key that matches
  // the one its object had at that place last time is compared byte by byte, and only a key
  // met anew is decoded (UTF-8 ends no character on an ASCII byte, so a key's bytes decode alone
  // as they would in the whole text).
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const walk = theWalk.reset(b, limits);
  try {
    const end = walk.run(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0);
    // What follows the object may only be JSON's whitespace (a tail of spaces, a body padded to
    // a length, is compared as a block).
    if (end >= 0 && end < b.length && !(b.length - end <= SPACES.length && b.compare(SPACES, 0, b.length - end, end) === 0)) {
      for (let i = end; i < b.length; i += 1) if (!isSpace(b[i]!)) return undefined;
    }
  } catch (err) {
    if (err instanceof NotJson) return undefined;
    throw err;
  }
  return walk;
}

/** The shape of a JSON object body, or undefined when the body is not one (or is too large to read). */
export function bodyShape(body: Uint8Array, limits: ShapeLimits = SCHEMA_LIMITS): BodyShape | undefined {
  const walk = walkOf(body, limits);
  return walk && { paths: new Map(walk.nodes.map((n) => [n.path, n.mask])), partial: walk.partial };
}

/** bodyShape as CapturedEvent.body_shape carries it (encodeBodyShape's text): "" for none. */
export function bodyShapeText(body: Uint8Array, limits: ShapeLimits = SCHEMA_LIMITS): string {
  const walk = walkOf(body, limits);
  if (!walk) return "";
  if (sameAsLast(walk)) return last.text;
  let out = walk.partial ? SHAPE_PARTIAL : SHAPE_COMPLETE;
  for (const n of walk.nodes) out += `\n${SHAPE_LETTERS_OF_MASK[n.mask]}:${n.path}`;
  last = { nodes: walk.nodes.slice(), masks: walk.nodes.map((n) => n.mask), partial: walk.partial, text: out };
  return out;
}

/** The last shape written: a sender's next body mostly has the same, and its text is not written again. */
let last: { nodes: PathNode[]; masks: number[]; partial: boolean; text: string } = { nodes: [], masks: [], partial: false, text: SHAPE_COMPLETE };

function sameAsLast(walk: Walk): boolean {
  const { nodes } = walk;
  if (walk.partial !== last.partial || nodes.length !== last.nodes.length) return false;
  for (let i = 0; i < nodes.length; i += 1) if (nodes[i] !== last.nodes[i] || nodes[i]!.mask !== last.masks[i]) return false;
  return true;
}
