// Types for the runtime's llhttp binding as node:http itself drives it (only src/relay/http1/llhttp-binding.ts imports it).
declare module "node:_http_common" {
  /** The binding's parser; callbacks are installed at the numeric slots named by the static k* constants. */
  export class HTTPParser {
    static readonly REQUEST: 1;
    static readonly RESPONSE: 2;
    static readonly kOnMessageBegin: number;
    static readonly kOnHeaders: number;
    static readonly kOnHeadersComplete: number;
    static readonly kOnBody: number;
    static readonly kOnMessageComplete: number;
    static readonly kOnExecute: number;
    static readonly kOnTimeout: number;
    static readonly kLenientNone: number;
    [slot: number]: unknown;
    initialize(type: number, resource: object, maxHeaderSize: number, lenientFlags: number): void;
    /** Bytes parsed, or an Error with `code` (`HPE_*`), `bytesParsed` and `reason`. */
    execute(data: Buffer): number | Error;
    /** Ends a message that is delimited by the connection's end; an Error when it was incomplete. */
    finish(): undefined | Error;
    close(): void;
    /** Clears the pause a kOnHeadersComplete that returned HPE_PAUSED left: the next execute parses on from that head. */
    resume(): void;
    /** Reads `handle` in C++ straight into the parser (no Buffer per read); results come to kOnExecute. */
    consume(handle: object): void;
    unconsume(): void;
    /** A copy of the read being parsed (what follows an upgrade head is in it). */
    getCurrentBuffer(): Buffer;
    free(): void;
    remove(): void;
  }
  /** Method names by the index kOnHeadersComplete passes. */
  export const methods: readonly string[];
}
