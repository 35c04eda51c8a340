// Random version-4 UUIDs, made 16 at a time from a block of random bytes fetched for 1,024: each id a slice of its batch's one string.

/** Random bytes fetched at once: Web Crypto's getRandomValues costs ~3 µs a call whatever its size up to a few KiB. */
const RANDOM_BLOCK_BYTES = 16 * 1024;
/** UUIDs per string: a long-lived request keeps its id's batch (576 bytes) alive, never more. */
const BATCH = 16;
const UUID_BYTES = 16;
const UUID_LENGTH = 36;
const HEX = Buffer.from("0123456789abcdef", "latin1");
/** Where each of a UUID's 16 bytes goes in its text, around the dashes of `6f1c0e0e-6a53-4a55-9d0b-3a4a3f0c2b1d`. */
const TEXT_AT = Uint8Array.of(0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34);
const DASHES_AT = [8, 13, 18, 23];

// Made at the first id, never at build time: a startup snapshot holding a batch would give every process the same ids.
let random: Uint8Array | undefined;
let randomUsed = RANDOM_BLOCK_BYTES;
let text: Buffer | undefined;
let batch = "";
let next = BATCH;

/**
 * What `crypto.randomUUID()` gives (RFC 9562 version 4, lower-case hex, 122 random bits from the
 * CSPRNG), for less: Node's own fetches 2 KiB of random bytes per 128 ids and joins each id from
 * 36 one-character strings (0.5 kB of garbage; ~0.9 µs a request in the loaded proxy, where the
 * access log asks for one per request: bench/README.md, "Access log"). Here a batch's text is
 * written as bytes into one buffer and read out as one string, and an id is a slice of it,
 * which V8 makes without copying. The global Web Crypto, not node:crypto: importing that
 * module costs ~10 ms of every start, and the global loads it on first use.
 */
export function randomUuid(): string {
  if (next === BATCH) {
    batch = newBatch();
    next = 0;
  }
  const start = next++ * UUID_LENGTH;
  return batch.slice(start, start + UUID_LENGTH);
}

function newBatch(): string {
  if (randomUsed === RANDOM_BLOCK_BYTES) {
    random = globalThis.crypto.getRandomValues(random ?? new Uint8Array(RANDOM_BLOCK_BYTES));
    randomUsed = 0;
  }
  if (text === undefined) {
    text = Buffer.alloc(BATCH * UUID_LENGTH);
    for (let uuid = 0; uuid < BATCH; uuid++) for (const at of DASHES_AT) text[uuid * UUID_LENGTH + at] = 0x2d;
  }
  const bytes = random!;
  for (let uuid = 0; uuid < BATCH; uuid++) {
    const base = uuid * UUID_LENGTH;
    for (let index = 0; index < UUID_BYTES; index++) {
      const raw = bytes[randomUsed++]!;
      // The version (4) in the high nibble of byte 6, the variant (10xx) in the high bits of byte 8.
      const byte = index === 6 ? (raw & 0x0f) | 0x40 : index === 8 ? (raw & 0x3f) | 0x80 : raw;
      const at = base + TEXT_AT[index]!;
      text[at] = HEX[byte >> 4]!;
      text[at + 1] = HEX[byte & 0x0f]!;
    }
  }
  return text.toString("latin1");
}
