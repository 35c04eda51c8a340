// The protobuf wire format, as far as the health messages need it: varints, tags, and skipping every other field of every wire type.

/** Thrown for bytes that are not a protobuf message; the caller answers grpc-status 3. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WireFormatError";
  }
}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

/** Field numbers are 1 .. 2^29-1 (protobuf's own limit, which protobuf-go and C++ enforce). */
const MAX_FIELD_NUMBER = 2 ** 29 - 1;
/** Nested groups deeper than this are refused, as protobuf's parsers refuse deep recursion (their limit is 100). */
const MAX_GROUP_DEPTH = 100;

/** One field's tag. */
export interface Tag {
  readonly field: number;
  readonly wireType: number;
}

/** Reads a message front to back; every read checks that its bytes are there. */
export class WireReader {
  readonly #bytes: Uint8Array;
  #offset = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  get done(): boolean {
    return this.#offset >= this.#bytes.length;
  }

  /**
   * A varint as a number. Values past 2^53 lose precision, which no caller minds: a length or a
   * field number that large is refused anyway. At most 10 bytes, the 10th 0 or 1 (64 bits), as
   * protobuf-go's ConsumeVarint.
   */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let index = 0; index < 10; index++) {
      if (this.#offset >= this.#bytes.length) throw new WireFormatError("truncated varint");
      const byte = this.#bytes[this.#offset++]!;
      if (index === 9 && byte > 1) throw new WireFormatError("varint over 64 bits");
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new WireFormatError("varint over 64 bits");
  }

  /** A varint's low 32 bits as a signed int32, exactly (how an int32 or enum field is read, even when sent as 10 bytes). */
  int32(): number {
    const start = this.#offset;
    this.varint();
    let low = 0;
    for (let index = 0; index < 5 && start + index < this.#offset; index++) {
      low += (this.#bytes[start + index]! & 0x7f) * 2 ** (7 * index);
    }
    return low | 0;
  }

  tag(): Tag {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field < 1 || field > MAX_FIELD_NUMBER) throw new WireFormatError(`field number ${field} out of range`);
    return { field, wireType: tag % 8 };
  }

  /** A length-delimited field's bytes (a view, not a copy). */
  lengthDelimited(): Uint8Array {
    const length = this.varint();
    if (length > this.#bytes.length - this.#offset) throw new WireFormatError("length past the end of the message");
    const start = this.#offset;
    this.#offset += length;
    return this.#bytes.subarray(start, this.#offset);
  }

  /** Skips the value of a field whose tag was just read, whatever its wire type. */
  skip(tag: Tag, depth = 0): void {
    switch (tag.wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.#advance(8);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.lengthDelimited();
        return;
      case WIRE_FIXED32:
        this.#advance(4);
        return;
      case WIRE_START_GROUP:
        this.#skipGroup(tag.field, depth);
        return;
      case WIRE_END_GROUP:
        throw new WireFormatError("end group without a start");
      default:
        throw new WireFormatError(`wire type ${tag.wireType} is not valid`);
    }
  }

  /** A (deprecated) group: fields up to the end-group tag of the same field number. */
  #skipGroup(field: number, depth: number): void {
    if (depth >= MAX_GROUP_DEPTH) throw new WireFormatError("groups nested too deep");
    for (;;) {
      if (this.done) throw new WireFormatError("group without its end");
      const inner = this.tag();
      if (inner.wireType === WIRE_END_GROUP) {
        if (inner.field !== field) throw new WireFormatError("end group of another field");
        return;
      }
      this.skip(inner, depth + 1);
    }
  }

  #advance(count: number): void {
    if (count > this.#bytes.length - this.#offset) throw new WireFormatError("fixed-width field past the end of the message");
    this.#offset += count;
  }
}

/** A varint's bytes (non-negative integers up to 2^53). */
export function encodeVarint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** The tag of a field, as its varint's bytes. */
export function encodeTag(field: number, wireType: number): number[] {
  return encodeVarint(field * 8 + wireType);
}
