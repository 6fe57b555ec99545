/**
 * Protobuf's wire format, for the messages written and read in one pass instead of through
 * protobuf-es's reflection (ADRs 0013, 0094): sizes, a writer into one buffer, a reader of one.
 */

export const LEN = 2;
export const VARINT = 0;

/** A field's tag, as the bytes it takes on the wire (field numbers below 2048 fit in two). */
export function tag(field: number, wireType: number): number[] {
  const t = (field << 3) | wireType;
  return t < 0x80 ? [t] : [(t & 0x7f) | 0x80, t >> 7];
}

/** Bytes of an unsigned varint below 2^53. */
export function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  let size = 5;
  for (let rest = Math.floor(n / 2 ** 35); rest > 0; rest = Math.floor(rest / 128)) size += 1;
  return size;
}

/** An int32 as protobuf writes it: negative values sign-extended to ten bytes. */
export function int32Size(n: number): number {
  return n < 0 ? 10 : varintSize(n);
}

/** An int64 (a bigint in protobuf-es) as the unsigned 64-bit value written on the wire. */
export function uint64Of(n: bigint): bigint {
  return BigInt.asUintN(64, n);
}

export function uint64Size(n: bigint): number {
  if (n < 0x20000000000000n) return varintSize(Number(n));
  let size = 1;
  for (let rest = n >> 7n; rest > 0n; rest >>= 7n) size += 1;
  return size;
}

export function lenField(tagBytes: number, length: number): number {
  return tagBytes + varintSize(length) + length;
}

export class Writer {
  at = 0;
  constructor(readonly buf: Buffer) {}

  raw(bytes: readonly number[]): void {
    for (const b of bytes) this.buf[this.at++] = b;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.at++] = n;
  }

  uint64(n: bigint): void {
    if (n < 0x20000000000000n) return this.varint(Number(n));
    while (n >= 0x80n) {
      this.buf[this.at++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.buf[this.at++] = Number(n);
  }

  int32(n: number): void {
    if (n >= 0) return this.varint(n);
    // Sign-extended to 64 bits: the low 32 bits, then all ones above them.
    this.uint64(uint64Of(BigInt(n)));
  }

  bytes(t: readonly number[], b: Uint8Array): void {
    this.raw(t);
    this.varint(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  string(t: readonly number[], s: string, length: number): void {
    if (length === 0) return;
    this.raw(t);
    this.varint(length);
    this.at += this.buf.write(s, this.at, length, "utf8");
  }
}

export class Reader {
  at: number;
  /** `fail` makes the error thrown for malformed bytes. */
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
    readonly fail: (message: string) => Error,
  ) {
    this.at = start;
  }

  /** A varint of up to 64 bits, as a number when below 2^53, else as a bigint. */
  varint(): number | bigint {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 10; i += 1) {
      if (this.at >= this.end) throw this.fail("truncated varint");
      const b = this.buf[this.at++] as number;
      if (i < 7) {
        n += (b & 0x7f) * scale;
        scale *= 128;
        if (b < 0x80) return n;
        continue;
      }
      // Beyond 49 bits: finish in bigint.
      let big = BigInt(n) + (BigInt(b & 0x7f) << BigInt(7 * i));
      let shift = 7 * (i + 1);
      let last = b;
      while (last >= 0x80) {
        if (this.at >= this.end || shift > 63) throw this.fail("bad varint");
        last = this.buf[this.at++] as number;
        big += BigInt(last & 0x7f) << BigInt(shift);
        shift += 7;
      }
      big = BigInt.asUintN(64, big);
      return big < 0x20000000000000n ? Number(big) : big;
    }
    throw this.fail("bad varint");
  }

  /** A length or tag: an unsigned varint that must fit what is left. */
  uint(): number {
    const n = this.varint();
    if (typeof n !== "number") throw this.fail("length out of range");
    return n;
  }

  /** An int32: the low 32 bits of the varint, signed (negative ones arrive as ten bytes). */
  int32(): number {
    const n = this.varint();
    if (typeof n === "number" && n < 0x80000000) return n;
    return Number(BigInt.asIntN(32, typeof n === "bigint" ? n : BigInt(n)));
  }

  int64(): bigint {
    const n = this.varint();
    return BigInt.asIntN(64, typeof n === "bigint" ? n : BigInt(n));
  }

  span(): [number, number] {
    const length = this.uint();
    const start = this.at;
    if (length > this.end - start) throw this.fail("truncated field");
    this.at = start + length;
    return [start, this.at];
  }

  bytes(): Uint8Array {
    const [start, end] = this.span();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const [start, end] = this.span();
    return this.buf.toString("utf8", start, end);
  }

  skip(wireType: number): void {
    if (wireType === VARINT) this.varint();
    else if (wireType === LEN) this.span();
    else if (wireType === 1 || wireType === 5) {
      const size = wireType === 1 ? 8 : 4;
      if (this.end - this.at < size) throw this.fail("truncated field");
      this.at += size;
    } else throw this.fail(`wire type ${wireType} not supported`);
  }
}
