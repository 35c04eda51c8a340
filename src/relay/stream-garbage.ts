// Asks V8 for a minor collection after every few MiB of streamed body or h2 socket reads, so one long paced stream costs a few MB, not tens.

/**
 * V8's gc() function, with the options this relay uses: a minor collection, or the "last
 * resort" major one that also gives emptied pages back (V8's CollectAllAvailableGarbage).
 */
export type CollectGarbage = (options: { type: "minor" } | { type: "major"; flavor: "last-resort" }) => void;

/** Obtained once for the process: each obtaining makes a context, which the function keeps alive. */
let obtained: CollectGarbage | undefined;

/** How many bytes read (bodies, h2 socket reads), either direction, between two requested collections. */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * V8's gc(), obtained when first needed. Not by starting with --expose-gc: any V8 flag that
 * changes V8's flag hash makes it reject the code cache Node ships for its own built-in modules,
 * so every `require("node:http")` and the rest compiled from source: +20 ms on each start of the
 * binary (hyperfine, the bundle's --version: 104 ms median without the flag, 128 ms with it).
 * Setting the flag at run time and reading gc from a fresh context gives the same function, at
 * the cost of one context (~1 ms), made only once 4 MiB of bodies have gone through. node:v8 and
 * node:vm are loaded here, not imported: a start that never streams 4 MiB does not load them.
 */
export function exposeGc(): CollectGarbage {
  const exposed = (globalThis as { gc?: CollectGarbage }).gc;
  if (exposed !== undefined) return exposed;
  if (obtained !== undefined) return obtained;
  process.getBuiltinModule("node:v8").setFlagsFromString("--expose-gc");
  obtained = process.getBuiltinModule("node:vm").runInNewContext("gc") as CollectGarbage;
  return obtained;
}

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
  readonly #obtain: () => CollectGarbage | undefined;
  /** null until the first collection is due; then gc(), or undefined when there is none. */
  #collect: CollectGarbage | undefined | null = null;
  #bytes = 0;

  /** `obtain` is called once, when the first collection is due; undefined turns collections off. */
  constructor(obtain: () => CollectGarbage | undefined = exposeGc) {
    this.#obtain = obtain;
  }

  /**
   * Counts bytes read into fresh Buffers, and collects every COLLECT_EVERY_BYTES of them: HTTP/1.1
   * bodies as they stream, and every h2 socket read whole (frame headers too: a flood of 1-octet
   * DATA frames is a tenth body, and counted by its body it let 20-40 MB of read buffers pile up).
   */
  streamed(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes < COLLECT_EVERY_BYTES) return;
    this.#bytes = 0;
    if (this.#collect === null) this.#collect = this.#obtain();
    this.#collect?.({ type: "minor" });
  }
}
