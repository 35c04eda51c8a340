// The request body sent on an app stream, kept (copied into one buffer, up to a bound) until the app answers, so that a stream the app refused unprocessed can be sent again whole.
import { AdvanceBudget } from "../../h2-codec/advance-budget.js";
import { HeldOctets } from "../held-octets.js";

/**
 * A body of at most this many bytes is kept for a second stream: a gRPC call's message, a form, a
 * JSON document. What outgrows it is let go as it is sent, and a refusal of its stream is then a
 * 502 (the body cannot be sent again). The same bound as a request body held while queued.
 */
export const RESEND_BODY_LIMIT = 64 * 1024;

/**
 * What every stream of the process together keeps for a resend: without it, 100 streams a
 * connection each kept their 64 KiB until answered, 6.4 MiB a connection of clients that send a
 * body and wait (issue 52's soak in 64 MiB was OOM-killed with two of them beside honest load).
 * Past it a body is let go as it is sent, as one past RESEND_BODY_LIMIT is: a refusal of its
 * stream is then a 502, which only a GOAWAY or REFUSED_STREAM under that load can cost.
 */
export const RESEND_BUDGET = new AdvanceBudget(1024 * 1024);

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
    if (kept.length + chunk.length > RESEND_BODY_LIMIT || !RESEND_BUDGET.take(chunk.length)) return this.letGo();
    kept.append(chunk);
  }

  /** Nothing of it will be sent again (the app answered, it outgrew the bound, the exchange ended): the copies go. */
  letGo(): void {
    this.#lost = true;
    this.#release();
  }

  /** Some of what was sent is no longer kept, so it cannot be sent again. */
  get lost(): boolean {
    return this.#lost;
  }

  /** All that was sent, as one buffer, for the next stream (which keeps its own, if need be). */
  take(): Buffer {
    const kept = this.#kept ?? new HeldOctets();
    this.#release();
    return kept.take();
  }

  #release(): void {
    if (this.#kept !== undefined) RESEND_BUDGET.give(this.#kept.length);
    this.#kept = undefined;
  }
}
