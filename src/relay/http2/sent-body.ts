// The request body sent on an app stream, kept (copied into one buffer, up to a bound) until the app answers, so that a stream the app refused unprocessed can be sent again whole.
import { HeldOctets } from "../held-octets.js";

/**
 * A body of at most this many bytes is kept for a second stream: a gRPC call's message, a form, a
 * JSON document. What outgrows it is let go as it is sent, and a refusal of its stream is then a
 * 502 (the body cannot be sent again). The same bound as a request body held while queued.
 */
export const RESEND_BODY_LIMIT = 64 * 1024;

/**
 * Made at a request's first body piece sent to the app; let go once the app's head comes (a
 * stream it answered is no longer "not processed", RFC 9113 §8.7). Until then a stream closed
 * with REFUSED_STREAM, as every stream above a GOAWAY's last stream id is, goes again with all
 * of this.
 */
export class SentBody {
  #kept: HeldOctets | undefined;
  #lost = false;

  /** A piece went to the app: copied in (a piece kept as its own Buffer cost ~100 bytes per 1-octet DATA frame). */
  sent(chunk: Buffer): void {
    if (this.#lost || chunk.length === 0) return;
    const kept = (this.#kept ??= new HeldOctets());
    if (kept.length + chunk.length > RESEND_BODY_LIMIT) return this.letGo();
    kept.append(chunk);
  }

  /** Nothing of it will be sent again (the app answered, or it outgrew the bound): the copies go. */
  letGo(): void {
    this.#lost = true;
    this.#kept = undefined;
  }

  /** Some of what was sent is no longer kept, so it cannot be sent again. */
  get lost(): boolean {
    return this.#lost;
  }

  /** All that was sent, as one buffer, for the next stream (which keeps its own, if need be). */
  take(): Buffer {
    const kept = this.#kept ?? new HeldOctets();
    this.#kept = undefined;
    return kept.take();
  }
}
