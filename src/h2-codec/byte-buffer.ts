// A growable output buffer: the one place a connection's frames (or an HPACK block) are written before a single socket write.
import "./latin1-buffer.js";

const NO_ROOM = Buffer.alloc(0);
/** The first buffer's size: what one exchange's frames need (SETTINGS, HEADERS, a small DATA, WINDOW_UPDATEs). */
const FIRST_SIZE = 1024;

/**
 * Bytes written at `length` into `buffer`. `take` hands out what was written since the last take
 * as a view and never writes over it again, until `rewind` says every view taken is done with:
 * when room runs out first, a new buffer takes the untaken bytes and the old one is left to the
 * socket that may still hold it. So a connection writes small frames with no allocation per
 * frame, and while its socket keeps up, none at all.
 */
export class ByteBuffer {
  buffer: Buffer;
  /** Where the untaken bytes begin. */
  start = 0;
  length = 0;

  /** No room until the first write: an idle connection's buffer is given back (release) and taken again by its next frame. */
  constructor(private readonly initialSize = 16384) {
    this.buffer = NO_ROOM;
  }

  /** Makes room for `extra` more octets at `length` (positions below `start` are not kept). */
  reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const kept = this.length - this.start;
    // From empty (new, or released while idle) the buffer doubles up to initialSize: a connection
    // that wrote a few frames holds a small one, a busy one reaches full size in a few writes.
    const doubled = Math.min(this.initialSize, Math.max(FIRST_SIZE, this.buffer.length * 2));
    // Its own memory, never a slice of the runtime's shared pool (which small sizes would get):
    // the views handed to the socket are of this buffer alone, and it is freed on its own.
    const grown = Buffer.allocUnsafeSlow(Math.max(kept + extra, doubled, kept * 2));
    this.buffer.copy(grown, 0, this.start, this.length);
    this.buffer = grown;
    this.start = 0;
    this.length = kept;
  }

  /** The bytes written since the last take (a view, never written again), or undefined when there are none. */
  take(): Buffer | undefined {
    if (this.length === this.start) return undefined;
    const taken = this.buffer.subarray(this.start, this.length);
    this.start = this.length;
    return taken;
  }

  /**
   * Every view taken has been written and nobody holds it any more (the kernel has the octets):
   * the next ones go at the start of the same buffer again. Without this, a busy connection
   * allocated a new buffer per `initialSize` octets, each outliving a few scavenges while it
   * filled, so promoted with its octets outside V8's heap, freed only by a full collection: 4-15
   * MB of them at a time under h2load -c10 -m10, and malloc's arena grew to hold them.
   */
  rewind(): void {
    if (this.start === this.length) this.start = this.length = 0;
  }

  /**
   * Everything written has been taken and rewound: the buffer is let go (an idle connection
   * holds none; its next write takes a new one). Views taken earlier stay valid.
   */
  release(): void {
    if (this.start !== this.length) return;
    this.buffer = NO_ROOM;
    this.start = this.length = 0;
  }

  /** Appends one octet (room already reserved). */
  pushByte(octet: number): void {
    this.buffer[this.length++] = octet;
  }

  /** Appends `text` as latin1 octets (room already reserved). */
  pushLatin1(text: string): void {
    this.length += this.buffer.latin1Write(text, this.length, text.length);
  }

  /** Appends a copy of `bytes`, reserving the room itself. */
  pushBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }
}
