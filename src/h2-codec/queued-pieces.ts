// A stream's queued DATA as octets, not pieces: small pieces left waiting for window are copied together into buffers of the queue's own.

/**
 * A piece under this size that has to wait is copied: a view keeps the whole socket read it came
 * from alive (a 1-octet DATA frame relayed to an app with its window closed held a 64 KiB read
 * slab), and each piece costs a Buffer object of ~100 bytes. Larger pieces wait as they are, so
 * bulk data is never copied.
 */
const SMALL_PIECE = 4096;
/** A buffer of the queue's own grows by doubling from this, up to MAX_OWN; then the next one starts. */
const FIRST_OWN = 256;
const MAX_OWN = 16384;

/** The queues' own buffers: only the last piece's buffer is written after that piece's end. */
const OWN = new WeakSet<ArrayBufferLike>();

/**
 * The last piece of `queue` (just pushed, and left waiting) is copied after the piece before it
 * when that one is in a buffer of ours with room, else into a buffer of ours, when it is small.
 * Called only when output waits, never on the path that sends at once.
 */
export function keepSmallTail(queue: Buffer[]): void {
  const last = queue.length - 1;
  const piece = queue[last] as Buffer;
  if (piece.length >= SMALL_PIECE || OWN.has(piece.buffer)) return;
  const previous = last > 0 ? (queue[last - 1] as Buffer) : undefined;
  if (previous !== undefined && OWN.has(previous.buffer)) {
    const end = previous.byteOffset + previous.length;
    const whole = previous.buffer;
    if (end + piece.length <= whole.byteLength) {
      new Uint8Array(whole, end, piece.length).set(piece);
      queue[last - 1] = Buffer.from(whole, previous.byteOffset, previous.length + piece.length);
      queue.pop();
      return;
    }
    if (previous.length + piece.length <= MAX_OWN) {
      // Grown: the waiting octets of the last own buffer and the piece, in one twice as large.
      const grown = own(Math.min(MAX_OWN, Math.max(2 * whole.byteLength, previous.length + piece.length)));
      previous.copy(grown, 0);
      piece.copy(grown, previous.length);
      queue[last - 1] = grown.subarray(0, previous.length + piece.length);
      queue.pop();
      return;
    }
  }
  const copy = own(Math.max(FIRST_OWN, piece.length));
  piece.copy(copy, 0);
  queue[last] = copy.subarray(0, piece.length);
}

function own(size: number): Buffer {
  // Its own memory, never a slice of the runtime's shared pool, so what is after a piece is ours to write.
  const buffer = Buffer.allocUnsafeSlow(size);
  OWN.add(buffer.buffer);
  return buffer;
}
