// Asks V8 for a minor collection after every few MiB of streamed body, so one long paced stream costs a few MB, not tens.

/** V8's gc(), present when the runtime runs with --expose-gc (the binary does: sea-config.json). */
type CollectGarbage = (options: { type: "minor" }) => void;

/** How many body bytes, either direction, between two requested collections. */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * Every socket read is a fresh 64 KiB Buffer whose memory lives outside V8's heap until the
 * small JS object holding it is collected. Streaming a body allocates almost nothing else, so
 * the young generation fills slowly and dead buffers pile up: one upload through the binary
 * peaked at +43 MB RssAnon (64 MiB, paced by a slow app) and +76 MB (512 MiB, fast). A minor
 * GC every 4 MiB of body keeps them at +9 and +13 MB (node bench/upload-memory.mjs). 8 MiB
 * between collections saved less (+12 MB paced, in a shell measurement); 2 MiB about 2 MB
 * more for twice the collections.
 */
export class StreamGarbage {
  readonly #collect: CollectGarbage | undefined;
  #bytes = 0;

  constructor(collect: CollectGarbage | undefined = (globalThis as { gc?: CollectGarbage }).gc) {
    this.#collect = collect;
  }

  /** Counts body bytes that went through; without an exposed gc() (node running the bundle) it does nothing. */
  streamed(bytes: number): void {
    if (this.#collect === undefined) return;
    this.#bytes += bytes;
    if (this.#bytes < COLLECT_EVERY_BYTES) return;
    this.#bytes = 0;
    this.#collect({ type: "minor" });
  }
}
